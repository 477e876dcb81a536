"""A small HTML tree for the tests of the pages ``bl`` writes (``bl compare --report``,
``bl view``): ``html.parser`` into nodes, every element closed where it should be.

A plain helper module (as ``support.py``): test modules import from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    parts: list[Node | str] = field(default_factory=list)  # children and text, in document order

    def iter(self, tag: str | None = None):
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            yield from child.iter(tag)

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def find_all(self, tag: str, css: str | None = None) -> list[Node]:
        return [n for n in self.iter(tag) if css is None or css in n.classes()]

    def all_text(self) -> str:
        return "".join(p if isinstance(p, str) else p.all_text() for p in self.parts)


VOID = {"meta", "br", "img", "link", "input", "hr", "line", "circle", "rect"}


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.doctype: str | None = None

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].text.append(data)
        self.stack[-1].parts.append(data)


def parse(document: str) -> tuple[TreeBuilder, Node]:
    builder = TreeBuilder()
    builder.feed(document)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    return builder, builder.root
