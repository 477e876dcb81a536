"""The Jinja2 environment of the HTML pages (``bl view``, ``bl compare --report``).

Why templates: a page built of f-strings is safe only while every interpolation remembers
its escaper, and one forgotten call is script injection from a hostile trajectory.  Here
markup lives in templates (``benchloop/viewer/templates/``, ``benchloop/compare/templates/``,
and the shared ``benchloop/base/templates/``, shipped in the wheel) and every value a template outputs goes through one path, whatever
the template's author remembers:

1. ``finalize`` (every ``{{ value }}``): the call's API keys masked (``secrets`` in the
   render's context), then every control, bidi or other hiding character shown as its escape
   (``hiding.EscapeTable``: it could reorder a line, "Trojan source");
2. autoescape: ``& < > " '`` escaped, so a value is text in element content and in a quoted
   attribute alike.

What autoescape cannot know is kept in the few filters below, each for one context:
``block`` (text in a ``<pre>``: line feeds and tabs kept), ``href`` (a relative link of
``--report-dir``: percent-encoded, no scheme), ``css`` (a class name: only ``[a-z0-9-]``).
No module passes markup of its own: the report's charts are data that a template draws too
(``compare/templates/chart.svg``).

Pages are streamed (``Template.generate``): a 50 MB trajectory is written piece by piece,
never held as one string.  Jinja2 is imported only when a page is made (never at start).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape

from .hiding import EscapeTable
from .masking import scrub

_HIDING = EscapeTable()
# Text in a block (``<pre>``, ``white-space: pre-wrap``) keeps its line feeds and tabs.
_BLOCK = EscapeTable({0x09: "\t", 0x0A: "\n"})
_ASCII_HIDING = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_CLASS = re.compile(r"[^a-z0-9-]")


def shown(value: Any, secrets: tuple[str, ...] = ()) -> str:
    """What a value says on a page, before escaping: its text, keys masked, hiding characters
    as escapes."""
    return scrub(str(value), secrets).translate(_HIDING)


@jinja2.pass_context
def _finalize(context: Any, value: Any) -> Any:
    if isinstance(value, Markup):
        return value
    return shown(value, context.get("secrets") or ())


@jinja2.pass_context
def block(context: Any, value: Any) -> Markup:
    """Text of several lines that renders as itself inside a ``<pre>``: keys masked, line feeds
    and tabs kept (a CR LF is a line feed), every other hiding character as its escape, escaped.
    Plain ASCII skips the per-character table (a 50 MB trajectory is mostly that)."""
    text = scrub(str(value), context.get("secrets") or ())
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if not text.isascii() or _ASCII_HIDING.search(text):
        text = text.translate(_BLOCK)
    return escape(text)


def href(relative: str) -> str:
    """A relative link to a file written beside the page (``instances/<cand>/<inst>.html``):
    every character but unreserved ones and ``/`` percent-encoded, so no link can carry a
    scheme, a query, a fragment or markup (autoescape then has nothing left to do)."""
    return quote(relative, safe="/")


def css(value: Any) -> str:
    """A class name made of a value (a verdict): lower case, ``[a-z0-9-]`` only, so it can add
    no other class and leave no attribute."""
    return _CLASS.sub("-", str(value).lower())


@cache
def environment(package: str) -> jinja2.Environment:
    """The environment of the templates of ``benchloop.<package>`` (its ``templates/``), which
    also finds the shared ones of ``benchloop/base/templates/`` (``page.html``: the head every
    page has, its Content-Security-Policy declared there once)."""
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader(f"benchloop.{package}", "templates"),
                                    jinja2.PackageLoader("benchloop.base", "templates")]),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(block=block, href=href, css=css)
    return env


def generate(package: str, name: str, secrets: tuple[str, ...] = (), **context: Any) -> Iterator[str]:
    """The page ``name`` of ``benchloop.<package>``'s templates, piece by piece."""
    return environment(package).get_template(name).generate(secrets=secrets, **context)

