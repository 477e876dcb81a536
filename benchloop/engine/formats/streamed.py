"""Rows written as their pages arrive: every format of a listing read page by page.

When an element holds a listing that is read as it is iterated (a
``pagination.Streamed``: ``jobs get --all``'s jobs, ``jobs table``'s rows), nothing waits for
the whole listing: each format writes what it can as soon as a page is in, and flushes
before the next page is asked for, so memory holds about one page whatever the size.  The
rows are taken and shaped a page (a list) at a time (``Streamed.pages``): at 10^6 rows, a
step per row in Python costs about a second, so the per-row work is left to C where it can be
(orjson's text of each row, ``csv``'s writer, ``csvdoc.page_cells``' checks of a column).

* ``json``: the bytes of ``--output json`` (docs/contract.md 3.1), written piece by piece:
  the element's keys, then the listing's items a batch at a time, each indented for its
  depth as ``json.dumps`` indents it (``tests`` compare the two).
* ``jsonl``: one row per line - one listed item (a job, with the element's ids such as
  ``group_id`` in front when it lacks them), not one line per element.  The element's other
  keys (``total``) are not rows; they stay in ``--output json``.
* ``text``: the lines ``--output text`` prints (one per listed item), as they come.
* ``csv``, ``markdown``, ``table``: the columns are chosen from the first ``BUFFER`` rows, by
  the rule of ``tabular.tabulate`` (``markdown`` and ``table``: and the row after them, which
  tells that the output is longer; ``csv`` knows that without it from a listing that says it
  has more rows, so its first page is out as soon as it is in).  An output that ends
  within them is exactly what it was before; a longer one writes those rows, then every
  later row as it comes, under the same header plus the declared columns the first rows
  lacked and one last column ``extra``:
  the fields of a row outside the columns, as one compact JSON object (empty when none),
  so nothing a later row brings is lost.  ``table`` sizes its columns from the first rows
  and cuts a longer cell later (``…``), as it does when the terminal is too narrow.

A page that fails after rows were written ends that element's rows: the error is reported
(``[error]`` line, exit 1, by the caller) and the other elements still print; in ``json``
the document is left unterminated, so no reader mistakes a cut listing for a whole one.

A listing written to a file (``write_document``) is ``json``'s text of the one document,
written the same way into the staged file; a page that fails raises, and the file is not made.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

from ...base.errors import BenchloopError
from ...base.hiding import LINE, is_terminal
from ...base.jsontext import encode
from ...table.outputs import Output
from ..pagination import PaginationError, Streamed
from .base import FORMATS, Refuse
from .tabular import Tabular, _dig, _path, columns_of, flat_rows

BUFFER = 1000  # rows the flat formats read before they choose their columns
_WRITE = 1 << 16  # characters collected before one write
_ITEMS = 200  # a listing's items encoded together
STREAMING = ("json", "jsonl", "text", "csv", "markdown", "table", "parquet")  # the formats written so

OnError = Callable[[str, Exception], None]


class Stop(Exception):
    """A listing failed where the format cannot go on (json): nothing more is written."""


def holds_streamed(value: Any, depth: int = 2) -> bool:
    """Whether ``value`` is, or holds within ``depth`` levels, a listing read as it is iterated."""
    if isinstance(value, Streamed):
        return True
    if depth and isinstance(value, dict):
        return any(holds_streamed(v, depth - 1) for v in value.values() if isinstance(v, (dict, list, Streamed)))
    if depth and isinstance(value, list):
        return any(holds_streamed(v, depth - 1) for v in value if isinstance(v, (dict, list, Streamed)))
    return False


class _Out:
    """Text collected and written in batches; ``flush`` writes it and flushes the stream."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.parts: list[str] = []
        self.size = 0
        self.pending: Callable[[], None] | None = None  # writes a listing's items not yet encoded

    def write(self, text: str) -> int:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= _WRITE:
            self.emit()
        return len(text)

    def emit(self) -> None:
        if self.parts:
            self.stream.write("".join(self.parts))
            self.parts.clear()
            self.size = 0

    def flush(self) -> None:
        if self.pending is not None:
            self.pending()
        self.emit()
        flush = getattr(self.stream, "flush", None)
        if flush is not None:
            flush()


def _listen(items: Any, out: _Out) -> None:
    if isinstance(items, Streamed):
        items.before_fetch = out.flush


def _guarded(ident: str, pages: Iterable[list[Any]], on_error: OnError, out: _Out) -> Iterator[list[Any]]:
    """The lists of items, ending where one of their pages failed (reported to ``on_error``)."""
    try:
        yield from pages
    except (BenchloopError, PaginationError) as exc:
        out.flush()
        on_error(ident, exc)


def _pages(items: Any) -> Iterable[list[Any]]:
    """A listing's items a page (a list) at a time; a list in memory is one page."""
    return items.pages() if isinstance(items, Streamed) else [items]


# ------------------------------------------------------------------- json
class _Json:
    """``--output json``'s bytes, piece by piece (``base.jsontext`` writes the same bytes whole)."""

    def __init__(self, out: _Out, pretty: bool, on_error: OnError):
        self.out, self.pretty, self.on_error = out, pretty, on_error
        self.ident = ""

    def array(self, pages: Iterable[list[Any]], level: int, deep: Callable[[Any], bool] | None = None) -> None:
        """A list's text, of its items a list at a time; ``deep(item)``: whether an item holds a
        listing itself (None: none does)."""
        pretty, out = self.pretty, self.out
        pad = "\n" + "  " * level if pretty else ""
        state = {"first": True}
        batch: list[Any] = []

        def drain() -> None:
            if batch:
                text = encode(batch, pretty)
                inner = text[1:-2].replace("\n", pad) if pretty else text[1:-1]
                out.write(("[" if state["first"] else ",") + inner)
                state["first"] = False
                batch.clear()

        def opened() -> None:
            out.write(("[" if state["first"] else ",") + (pad + "  " if pretty else ""))
            state["first"] = False

        outer, out.pending = out.pending, drain
        try:
            for page in pages:
                if deep is None:
                    batch.extend(page)
                    if len(batch) >= _ITEMS:
                        drain()
                    continue
                for item in page:
                    if deep(item):
                        drain()
                        opened()
                        out.pending = None
                        self.value(item, level + 1)
                        out.pending = drain
                        continue
                    batch.append(item)
                    if len(batch) >= _ITEMS:
                        drain()
            drain()
        finally:
            out.pending = outer
        out.write("[]" if state["first"] else pad + "]")

    def value(self, value: Any, level: int) -> None:
        pretty, out = self.pretty, self.out
        pad = "\n" + "  " * level if pretty else ""
        if isinstance(value, Streamed):
            _listen(value, out)
            self.array(_guarded(self.ident, value.pages(), _stop(self.on_error), out), level)
        elif isinstance(value, dict) and holds_streamed(value):
            out.write("{")
            for n, (key, item) in enumerate(value.items()):
                out.write(("," if n else "") + (pad + "  " if pretty else "") + encode(key, False)
                        + (": " if pretty else ":"))
                self.value(item, level + 1)
            out.write(pad + "}")
        elif isinstance(value, list) and holds_streamed(value):
            self.array([value], level, holds_streamed)
        else:
            text = encode(value, pretty)
            out.write(text.replace("\n", pad) if level and pretty else text)


def _write_json(out: _Out, pairs: list[tuple[str, Any]], pretty: bool, on_error: OnError) -> None:
    writer = _Json(out, pretty, on_error)
    deep = {id(e) for _, e in pairs if not isinstance(e, Streamed) and holds_streamed(e)}

    def elements() -> Iterator[list[Any]]:
        for ident, element in pairs:
            writer.ident = ident
            if isinstance(element, Streamed):  # a listing of rows: its rows are the elements
                _listen(element, out)
                yield from _guarded(ident, element.pages(), _stop(on_error), out)
            else:
                yield [element]

    try:
        writer.array(elements(), 0, lambda item: id(item) in deep)
    except Stop:
        out.flush()
        return
    out.write("\n")


def write_document(stream: TextIO, value: Any, pretty: bool) -> None:
    """One JSON document and its newline (a listing's file: ``jobs download``'s job_list.json),
    each listing it holds written as its pages arrive: the bytes ``base.jsontext.write`` gives
    of the whole value, in about a page of memory.  A page that fails raises where it fails
    (``PaginationError`` or the request's error), after what came before it was written: the
    caller's staged file is removed then, so a cut document is never a file."""
    def fail(_ident: str, exc: Exception) -> None:
        raise exc

    out = _Out(stream)
    _Json(out, pretty, fail).value(value, 0)
    out.write("\n")
    out.flush()


def _stop(on_error: OnError) -> OnError:
    def stop(ident: str, exc: Exception) -> None:
        on_error(ident, exc)
        raise Stop()

    return stop


# ------------------------------------------------------------------- rows
def element_rows(element: Any, output: Output | None, with_ids: bool = True) -> Iterable[Any]:
    """The rows of one element: a listing's items, or the declared rows (the element's ids in
    front when ``with_ids`` and a row lacks them), else the element as one row."""
    if isinstance(element, Streamed):
        return element
    if output is None or output.rows is None:
        return [element]
    items = _dig(element, output.rows)
    if not isinstance(items, (list, Streamed)):
        return [element]
    if not with_ids:
        return items
    ids = {k: element[k] for k in output.ids if isinstance(element, dict) and k in element}
    if not ids:
        return items
    return (row for page in _pages(items) for row in _with_ids(page, ids))


def _with_ids(page: list[Any], ids: dict[str, Any]) -> list[Any]:
    """A page's rows with the element's ids in front where a row lacks them (a row that has
    them all, as a job of a job list has its group_id, is itself: the same keys in its order)."""
    keys = ids.keys()
    return [item if type(item) is dict and keys <= item.keys()
            else {**{k: v for k, v in ids.items() if k not in item}, **item} if isinstance(item, dict) else item
            for item in page]


def _element_pages(element: Any, output: Output | None, with_ids: bool, out: _Out) -> Iterable[list[Any]]:
    """:func:`element_rows` a list at a time (a listing read page by page: a page each)."""
    if isinstance(element, Streamed):
        _listen(element, out)
        return element.pages()
    if output is None or output.rows is None:
        return [[element]]
    items = _dig(element, output.rows)
    if not isinstance(items, (list, Streamed)):
        return [[element]]
    _listen(items, out)
    pages = _pages(items)
    ids = {k: element[k] for k in output.ids if isinstance(element, dict) and k in element} if with_ids else {}
    if not ids:
        return pages
    return (_with_ids(page, ids) for page in pages)


def _all_rows(pairs: list[tuple[str, Any]], output: Output | None, on_error: OnError, out: _Out,
              with_ids: bool = True) -> Iterator[list[Any]]:
    """Every element's rows, a list at a time (a listing's page, or an element's rows)."""
    for ident, element in pairs:
        yield from _guarded(ident, _element_pages(element, output, with_ids, out), on_error, out)


def _write_lines(out: _Out, pairs: list[tuple[str, Any]], name: str, output: Output | None, on_error: OnError,
                 refuse: Refuse | None) -> None:
    terminal = is_terminal(out.stream)
    if name == "jsonl":  # jsondoc.JsonLines.line of each row, a page in one go
        from ...base.hiding import json_for_terminal as for_terminal
        from ...base.jsontext import lines

        for page in _all_rows(pairs, output, on_error, out):
            text = lines(page)
            out.write(for_terminal(text) if terminal else text)
        return
    line = FORMATS[name]().line  # type: ignore[attr-defined]
    for page in _all_rows(pairs, output, on_error, out, with_ids=False):
        out.write("".join([line(row, terminal, refuse) for row in page]))


def _extra_name(columns: list[str]) -> str:
    name = "extra"
    while name in columns:
        name += "_"
    return name


def _longer_than(pairs: list[tuple[str, Any]], output: Output | None, count: int) -> bool:
    """Whether a listing of ``pairs`` says it has more than ``count`` rows (its total: a walk
    that succeeds hands out at least as many; one that fails ends with an error anyway)."""
    for _ident, element in pairs:
        items = element if isinstance(element, Streamed) or output is None or output.rows is None \
            else _dig(element, output.rows)
        announced = items.announced() if isinstance(items, Streamed) else None
        if announced is not None and announced > count:
            return True
    return False


def _write_flat(out: _Out, pairs: list[tuple[str, Any]], name: str, output: Output | None, on_error: OnError,
                note: Callable[[str], None] | None) -> None:
    pages = (flat_rows(page) for page in _all_rows(pairs, output, on_error, out))
    # The first BUFFER rows choose the columns.  Whether the output ends within them is known
    # from the row after them, or, for csv, from a listing that says it is longer: then its
    # first page is written as soon as it is in, never after the next one.
    want = BUFFER if name == "csv" and _longer_than(pairs, output, BUFFER) else BUFFER + 1
    head: list[dict[str, Any]] = []
    for page in pages:
        head.extend(page)
        if len(head) >= want:
            break
    head, rest = head[:want], head[want:]
    where = _path(output.rows or ()) if output is not None else None
    fmt = FORMATS[name]()
    if len(head) < want:  # all of it: exactly what the format writes of the whole table
        table = Tabular(columns_of(head, output), head, "[]" + where if where is not None else "")
        out.emit()
        fmt.render(out.stream, table, False, note, output)
        return
    columns = columns_of(head, output)
    if output is not None and not output.chosen_columns:
        columns += [c for c in output.column_names if c not in columns]
    extra = _extra_name(columns)
    known = set(columns)

    def cells(row: dict[str, Any]) -> list[Any]:
        values = list(map(row.get, columns))
        if known.issuperset(row):  # the common case: no field outside the columns
            values.append(None)
            return values
        rest = {k: v for k, v in row.items() if k not in known}
        values.append(encode(rest, False) if rest else None)
        return values

    header = [*columns, extra]
    later = itertools.chain([head, rest], pages)
    if name == "parquet":
        from .columnar import Target
        from .parquet import write

        target = out.stream if isinstance(out.stream, Target) else Target(None, out.stream)
        write(target.path, target.stdout, header, (cells(r) for page in later for r in page), head, output)
    elif name == "csv":
        _csv_rows(out, header, (_page_cells(page, columns, known, cells) for page in later))
    elif name == "markdown":
        _markdown_rows(out, header, [cells(r) for r in head], (cells(r) for page in later for r in page))
    else:
        _table_rows(out, header, [cells(r) for r in head], (cells(r) for page in later for r in page))


def _page_cells(page: list[dict[str, Any]], columns: list[str], known: set[str],
                cells: Callable[[dict[str, Any]], list[Any]]) -> list[Sequence[Any]]:
    """``cells`` of each row of a page.  A page whose rows all have the keys of its first row,
    each a column and the columns none of them has after the rest (a job listing's, a
    table's), is read in C: one ``itemgetter`` a row, then the empty cells (``extra`` too)."""
    keys = page[0].keys() if page else None
    if keys is not None and len(keys) > 1 and known.issuperset(keys):
        present = columns[:len(keys)]
        if keys == set(present) and set(map(len, page)) == {len(present)}:  # so: no key but these
            try:
                values = list(map(operator.itemgetter(*present), page))
            except KeyError:  # a row without one of them (and so with another key)
                return [cells(r) for r in page]
            return list(map(operator.add, values, itertools.repeat((None,) * (len(columns) - len(present) + 1))))
    return [cells(r) for r in page]


def _csv_rows(out: _Out, header: list[str], pages: Iterable[list[Sequence[Any]]]) -> None:
    """csvdoc's rows of each page (``csvdoc.page_cells``: a column at a time), written through
    one ``csv`` writer into a buffer and then onto the stream a page at a time."""
    import csv
    import io

    from .csvdoc import _HIDING, cell, page_cells

    hiding = LINE if is_terminal(out.stream) else _HIDING
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([cell(c, hiding) for c in header])
    for rows in pages:
        writer.writerows(page_cells(rows, hiding))
        out.write(buffer.getvalue())
        buffer.seek(0)
        buffer.truncate()
    out.write(buffer.getvalue())


def _markdown_rows(out: _Out, header: list[str], first: list[list[Any]], rows: Iterator[list[Any]]) -> None:
    from .markdowndoc import _numeric, cell

    right = [_numeric([r[i] for r in first]) for i in range(len(header))]
    out.write("| " + " | ".join(cell(c) for c in header) + " |\n")
    out.write("| " + " | ".join("---:" if r else "---" for r in right) + " |\n")
    for values in rows:
        out.write("| " + " | ".join(cell(v) for v in values) + " |\n")


def _table_rows(out: _Out, header: list[str], first: list[list[Any]], rows: Iterator[list[Any]]) -> None:
    import shutil

    from ...base import textwidth
    from .table import _cell, _widths

    width = shutil.get_terminal_size((120, 24)).columns
    names = [_cell(c) for c in header]
    shown = [[_cell(v) for v in r] for r in first]
    natural = [max(textwidth.width(names[i]), *(textwidth.width(r[i]) for r in shown)) for i in range(len(header))]
    sizes = _widths(natural, width)

    def line(values: list[str]) -> str:
        return "  ".join(textwidth.pad(textwidth.cut(v, s, "…"), s) for v, s in zip(values, sizes, strict=True)).rstrip()

    out.write(line(names) + "\n" + "  ".join("-" * s for s in sizes) + "\n")
    for values in rows:
        out.write(line([_cell(v) for v in values]) + "\n")


# -------------------------------------------------------------------- all
def write(stream: TextIO, pairs: list[tuple[str, Any]], name: str, pretty: bool, output: Output | None = None,
          note: Callable[[str], None] | None = None, refuse: Refuse | None = None,
          on_error: OnError | None = None) -> None:
    """Write the elements of ``pairs`` (``(id, element)``, in order) in format ``name``, each
    listing as its pages arrive; ``on_error(id, exc)`` gets a listing's page that failed."""
    def report(ident: str, exc: Exception) -> None:
        if on_error is None:
            raise exc
        on_error(ident, exc)

    if name == "json" and is_terminal(stream):
        from ...base.hiding import JsonTerminal

        stream = JsonTerminal(stream)  # type: ignore[assignment]
    out = _Out(stream)
    if name == "json":
        _write_json(out, pairs, pretty, report)
    elif name in ("jsonl", "text"):
        _write_lines(out, pairs, name, output, report, refuse)
    else:
        _write_flat(out, pairs, name, output, report, note)
    out.flush()
