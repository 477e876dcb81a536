"""The HTML pages come from autoescaped Jinja2 templates, and the few escapers autoescape does
not cover hold against hostile strings.

* Markup lives in the templates (``benchloop/viewer/templates/``,
  ``benchloop/compare/templates/``): the modules that say what a page shows (the charts
  included: shapes as data) build no tag, and no template marks a value safe (``|safe``,
  ``Markup``), so nothing reaches a page unescaped.
* Every output is masked, its hiding characters shown as escapes, and escaped
  (``finalize`` + autoescape); ``|block`` keeps the lines of a ``<pre>``; ``|href`` and
  ``|css`` make a relative link and a class name of any string.  Each is tried with
  hostile strings, and the report's links with a hostile instance against a stand-in
  backend (``test_report_dir_safety``, ``test_view``).
* Pages are generated piece by piece, and Jinja2 is imported only when a page is made.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from html_tree import parse
from hypothesis import given
from hypothesis import strategies as st
from support import ROOT

from benchloop.base import templating

PAGE_MODULES = [ROOT / "benchloop" / "viewer" / "page.py", ROOT / "benchloop" / "compare" / "html_report.py",
                ROOT / "benchloop" / "compare" / "charts.py", ROOT / "benchloop" / "compare" / "trend_report.py"]
TEMPLATES = sorted((ROOT / "benchloop").rglob("templates/*.html"))
HOSTILE = ["<script>alert(1)</script>", '" onmouseover="alert(2)', "' onfocus='alert(3)", "javascript:alert(4)",
           "../../etc/passwd", "a%2Fb c?x=1#frag", "\x1b[31mred\u202eevil", "&amp; &lt;", "</pre><script>",
           "\r\nline\ttab", "data:text/html,<script>", "//evil.example/x", "日本語 é", "\\\\server\\share"]
KEY = "sk-template-key-0123456789"


def _strings(path: Path) -> list[str]:
    """The string constants of a module that are no docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: p.name)
def test_the_page_modules_build_no_markup(path):
    tags = [s for s in _strings(path) if re.search(r"</?[a-zA-Z][a-zA-Z0-9]*[\s>/]", s)]
    assert tags == []


def test_no_template_marks_a_value_safe():
    assert TEMPLATES, "no templates found"
    for path in TEMPLATES:
        source = path.read_text(encoding="utf-8")
        assert "|safe" not in source.replace(" ", "") and "Markup" not in source, path.name
        assert "autoescape false" not in source, path.name


def render(source: str, secrets: tuple[str, ...] = (), **context) -> str:
    env = templating.environment("viewer")
    return "".join(env.from_string(source).generate(secrets=secrets, **context))


@pytest.mark.parametrize("value", HOSTILE)
def test_every_output_is_text_in_content_and_in_attributes(value):
    document = render('<p title="{{ v }}" class=\'{{ v }}\'>{{ v }}</p>', v=value)
    _, root = parse(document)
    [p] = root.find_all("p")
    assert set(p.attrs) == {"title", "class"}  # no attribute added, none left
    shown = templating.shown(value)
    assert p.attrs["title"] == p.attrs["class"] == shown and p.all_text() == shown
    assert not root.find_all("script") and "\x1b" not in document and "\u202e" not in document


def test_the_key_is_masked_wherever_it_is_output():
    document = render("{{ a }} {{ b|block }} <i title='{{ c }}'></i>", (KEY,), a=f"x{KEY}y", b=f"1\n{KEY}\n2",
                      c={"k": KEY})
    assert KEY not in document and document.count("***") >= 3


@pytest.mark.parametrize("value", HOSTILE)
def test_block_keeps_lines_and_tabs_and_nothing_else(value):
    document = render("<pre>{{ v|block }}</pre>", v=value)
    _, root = parse(document)
    [pre] = root.find_all("pre")
    text = pre.all_text()
    assert "\r" not in text and "\x1b" not in text and "\u202e" not in text and not root.find_all("script")
    assert text.count("\n") == value.replace("\r\n", "\n").count("\n") and text.count("\t") == value.count("\t")


@given(st.text(max_size=60))
def test_block_of_any_text_is_that_text(value):
    _, root = parse(render("<pre>{{ v|block }}</pre>", v=value))
    expected = value.replace("\r\n", "\n").translate(templating._BLOCK)
    assert root.find_all("pre")[0].all_text() == expected


@pytest.mark.parametrize("value", HOSTILE + ["instances/CAND/a b.html"])
def test_href_is_a_relative_link_to_that_path_only(value):
    link = templating.href(value)
    assert re.fullmatch(r"[A-Za-z0-9%._~/-]*", link), link  # no scheme, query, fragment, quote or markup
    assert unquote(link) == value  # what a browser opens is the path given
    _, root = parse(render('<a href="{{ p|href }}">x</a>', p=value))
    assert root.find_all("a")[0].attrs["href"] == link


@given(st.text(max_size=40))
def test_css_makes_one_class_name_of_anything(value):
    name = templating.css(value)
    assert re.fullmatch(r"[a-z0-9-]*", name) and len(name) == len(value.lower())


@pytest.mark.parametrize("name", HOSTILE)
def test_a_chart_draws_any_name_as_text(name):
    """A group, slice or cluster name is a text, a tooltip and a label of a chart: never markup."""
    from benchloop.compare import charts

    drawn = charts.drawn(charts.differences([(name, 0.25, [0.1, 0.4]), ("b", -0.5, None)], "slice"))
    _, root = parse(drawn)
    [svg] = root.find_all("svg")
    assert svg.attrs["class"] == "chart-slices" and not root.find_all("script") and "\x1b" not in drawn
    assert templating.shown(charts._short(name, 30)) in [t.all_text() for t in root.find_all("text")]
    assert any(templating.shown(name) in t.all_text() for t in root.find_all("title"))
    for node in root.iter():
        assert not any(attr.startswith("on") or attr == "href" for attr in node.attrs), node.tag


def test_pages_are_generated_piece_by_piece():
    from benchloop.compare import html_report
    from benchloop.viewer import page

    steps = [{"step": i, "role": "tool", "content": f"s{i}"} for i in range(50)]
    pieces = page.render([{"job_id": "J", "trajectory": steps}])
    assert not isinstance(pieces, (str, list)) and len(list(pieces)) > 50
    report = html_report.generate([])
    assert not isinstance(report, (str, list)) and "".join(report).startswith("<!DOCTYPE html>")


def test_jinja2_is_imported_only_when_a_page_is_made():
    code = ("import sys\n"
            "from benchloop.viewer import page\nfrom benchloop.compare import html_report\n"
            "from benchloop.engine.combines import view, comparison\n"
            "assert 'jinja2' not in sys.modules, 'at import'\n"
            "''.join(page.render([{'job_id': 'J', 'trajectory': []}]))\n"
            "assert 'jinja2' in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("kind", "data"), [
    ("image/png", 'AAAA" onerror="alert(1)'), ("image/png", "javascript:alert(1)"), ("text/html", "PGI+"),
    ("image/svg+xml", "PHN2Zz4="), ("image/png ", "AAAA"), ("image/png", "AA AA"), ("image/png", None),
])
def test_an_image_source_is_a_checked_data_uri_or_nothing(kind, data):
    """``src`` is the one URL a page holds: only ``data:`` of an allowed image type and base64."""
    from benchloop.viewer import media

    assert media.data_uri({"type": kind, "data": data}) is None
    assert media.data_uri({"type": "image/png", "data": "iVBORw0KGgo="}) == "data:image/png;base64,iVBORw0KGgo="


def test_the_head_and_its_csp_are_declared_once_for_every_page():
    """One shared head (base/templates/page.html) holds the doctype, the CSP and the viewport;
    every page template calls it, none declares a policy of its own."""
    from benchloop.compare import html_report
    from benchloop.viewer import page

    shared = ROOT / "benchloop" / "base" / "templates" / "page.html"
    assert shared in TEMPLATES
    pages = [p for p in TEMPLATES if p != shared]
    assert pages
    for path in TEMPLATES:
        source = path.read_text(encoding="utf-8")
        assert (source.count("http-equiv=\"Content-Security-Policy\"") == 1) == (path == shared), path.name
        assert ("<!DOCTYPE" in source) == (path == shared), path.name
    for path in pages:
        source = path.read_text(encoding="utf-8")
        assert '{%- from "page.html" import head -%}' in source and "{% call head(title" in source, path.name
    env = templating.environment("compare")
    for images, csp in ((False, html_report.CSP), (True, page.CSP)):
        out = "".join(env.from_string('{% from "page.html" import head %}{% call head(title, images=i) %}'
                                      "b{}{% endcall %}").generate(secrets=(), title="<t>", i=images))
        builder, root = parse(out + "<body></body></html>")
        assert builder.doctype == "DOCTYPE html"
        [meta] = [m for m in root.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
        assert meta.attrs["content"] == csp
        assert root.find_all("title")[0].all_text() == "<t>" and root.find_all("style")[0].all_text() == "b{}"
