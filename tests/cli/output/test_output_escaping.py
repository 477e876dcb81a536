"""Server strings on stdout: what a terminal shows, and what the next command of a pipe reads.

Round four of the reliability work (docs/reliability.md).  A hostile backend (the scripted
server on loopback) names its jobs with terminal escapes (ESC, OSC, CSI, the 8-bit CSI
U+009B, NUL, CR, DEL, NEL), bidi and zero-width characters, a tag character, a line and a
tab inside an id, a lone surrogate.  The real ``bl`` runs as a process with stdout on a
pseudo-terminal (raw mode: its bytes exactly as written) or on a pipe:

* on a terminal no format lets such a character through as it is: text, json, jsonl,
  yaml, csv, table and markdown show escapes, and json, jsonl and yaml still read back as
  the same data;
* to a pipe, json keeps json.dumps's bytes and ``--output text`` prints one value per line
  or leaves the line out (exit 1, one ``[error]``): a value ``a<LF>b`` never becomes two.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import unicodedata

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from support import API_KEY, pretty, run_on_terminal

from benchloop.engine import formats
from benchloop.sandbox.scripted import json_reply, start_scripted

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

PLAIN = ["G1-J0001", "评测-任务"]  # ordinary ids, letters of any script
HIDDEN = ["bidi\u202eexe.md", "zero\u200bwidth", "tag\U000e0041x"]  # format characters: no line break
BREAKING = ["two\nlines", "osc\x1b]0;owned\x07x", "csi\x1b[2Jx", "c1\x9b2Jx", "nul\x00x", "cr\rx", "tab\tx",
            "del\x7fx", "nel\x85x", "ls\u2028x", "lone\ud800x"]
IDS = PLAIN + HIDDEN + BREAKING
PAGE = {"jobs": [{"job_id": job, "status": "ok"} for job in IDS], "total": len(IDS)}
ELEMENT = {"group_id": "G1", **PAGE}  # what `jobs get -g G1` prints for the page
QUERY = ["--query", "[].jobs[].job_id"]


def raw_hiding(text: str, layout: str = "\n") -> list[str]:
    """Characters that drive a terminal or hide text, left as they are (``layout``: the format's own)."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") and c not in layout]


@pytest.fixture(scope="module")
def hostile():
    with start_scripted({"/openapi/jobs": json_reply(PAGE)}) as srv:
        yield srv


def bl_args(srv, fmt: str, *extra: str) -> list[str]:
    return ["--host", srv.url, "--api-key", API_KEY, "jobs", "get", "-g", "G1", "--output", fmt, *extra]


def on_terminal(srv, fmt: str, *extra: str) -> tuple[int, str, str]:
    code, seen, err = run_on_terminal(bl_args(srv, fmt, *extra), raw=True)
    return code, seen.decode("utf-8", "surrogateescape"), err.decode("utf-8", "replace")


def to_pipe(srv, fmt: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchloop", *bl_args(srv, fmt, *extra)], capture_output=True,
                          timeout=60)


# ------------------------------------------------------------------ --output text
@pytest.mark.parametrize("extra", [QUERY, []], ids=["query", "streamed"])
def test_text_to_a_pipe_never_cuts_a_value_in_two(hostile, extra):
    """Each line is one whole value (one job's values, tab-separated, when streamed): a value that
    would break its line is left out with one ``[error]`` and exit 1 (was: ``two``, ``lines`` and
    raw escapes printed, then an unexpected UnicodeEncodeError)."""
    result = to_pipe(hostile, "text", *extra)
    lines = result.stdout.decode("utf-8").split("\n")
    assert lines[-1] == ""
    expected = [job if extra else f"{job}\tok" for job in PLAIN + HIDDEN]
    assert lines[:-1] == expected  # format characters do not break a line: the exact value
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert f"[error] --output text left out {len(BREAKING)} line(s): a value holds a line break" in err
    assert "(the first: 'two\\nlines'); --output jsonl prints every value exactly" in err
    assert "unexpected" not in err


def test_text_on_a_terminal_shows_every_value_escaped_on_its_line(hostile):
    code, seen, err = on_terminal(hostile, "text", *QUERY)
    assert code == 0, err
    assert raw_hiding(seen) == []
    lines = seen.split("\n")[:-1]
    assert len(lines) == len(IDS)  # one line per value, the line feed and the tab of a value escaped
    assert lines[:2] == PLAIN
    assert lines[2:] == ["bidi\\u202eexe.md", "zero\\u200bwidth", "tag\\U000e0041x", "two\\x0alines",
                         "osc\\x1b]0;owned\\x07x", "csi\\x1b[2Jx", "c1\\x9b2Jx", "nul\\x00x", "cr\\x0dx",
                         "tab\\x09x", "del\\x7fx", "nel\\x85x", "ls\\u2028x", "lone\\ud800x"]


@given(st.lists(st.text(max_size=8), max_size=8))
def test_text_prints_each_value_whole_or_refuses_it(values):
    """For any strings: every printed line is one of them, whole; together with the refused
    ones, each value is accounted for once."""
    out, refused = io.StringIO(), []
    formats.emit(out, [{"id": v} for v in values], "text", pretty=False, refuse=refused.append)
    printed = out.getvalue().split("\n")[:-1]
    assert sorted(printed + refused) == sorted(values)


# ------------------------------------------------------------------ json, jsonl, yaml
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_on_a_terminal_escapes_what_json_leaves_raw_and_reads_back_the_same(hostile, fmt):
    """DEL, C1 (U+009B, NEL), bidi, zero-width, U+2028 and tag characters are JSON escapes on a
    terminal (was: written as they are); the text is still JSON of the same strings."""
    code, seen, err = on_terminal(hostile, fmt)
    assert code == 0, err
    assert raw_hiding(seen) == []
    assert '"c1\\u009b2Jx"' in seen and '"bidi\\u202eexe.md"' in seen and '"tag\\udb40\\udc41x"' in seen
    value = json.loads(seen) if fmt == "json" else [json.loads(line) for line in seen.splitlines()]
    # jsonl: one listed job per line, carrying the page's group_id
    assert value == ([ELEMENT] if fmt == "json" else [{"group_id": "G1", **job} for job in PAGE["jobs"]])


def test_json_to_a_pipe_keeps_json_dumps_bytes(hostile):
    """*(guard)* Off a terminal nothing changes: contract 3.1's bytes (a lone surrogate as its escape)."""
    result = to_pipe(hostile, "json")
    assert result.returncode == 0
    assert result.stdout == pretty([ELEMENT]).replace("\ud800", "\\ud800").encode("utf-8")


def test_yaml_on_a_terminal_escapes_format_characters_and_reads_back_the_same(hostile):
    code, seen, err = on_terminal(hostile, "yaml")
    assert code == 0, err
    assert raw_hiding(seen) == []  # was: U+202E, U+200B and U+2028 as they are
    assert '"bidi\\u202Eexe.md"' in seen
    assert yaml.safe_load(seen) == [ELEMENT]


def test_yaml_to_a_pipe_is_pyyamls_document(hostile):
    """*(guard)* Off a terminal the document is PyYAML's, unchanged."""
    result = to_pipe(hostile, "yaml")
    expected = yaml.safe_dump([ELEMENT], allow_unicode=True, sort_keys=False, default_flow_style=False)
    assert result.returncode == 0
    assert result.stdout == expected.encode("utf-8", "surrogateescape")


# ------------------------------------------------------------------ the flat formats
@pytest.mark.parametrize("fmt, layout", [("csv", "\r\n\t"), ("table", "\n"), ("markdown", "\n")])
def test_the_flat_formats_on_a_terminal_let_no_control_through(hostile, fmt, layout):
    """Every cell one line, escapes for the rest (csv: was a raw CR, which moves the cursor back
    over the row, and a line feed splitting a row in two; table and markdown held already)."""
    code, seen, err = on_terminal(hostile, fmt)
    assert code == 0, err
    assert raw_hiding(seen, layout) == []
    rows = seen.splitlines()
    assert len(rows) == len(IDS) + (1 if fmt == "csv" else 2)
    assert "\r" not in seen.replace("\r\n", "")
    assert "c1\\x9b2Jx" in seen and "bidi\\u202eexe.md" in seen


def test_csv_to_a_pipe_keeps_line_breaks_quoted(hostile):
    """*(guard)* Off a terminal a CSV cell keeps its line feed and carriage return (quoted, RFC 4180)."""
    result = to_pipe(hostile, "csv")
    assert result.returncode == 0
    assert b'G1,"two\nlines",ok\r\n' in result.stdout and b'G1,"cr\rx",ok\r\n' in result.stdout


# ------------------------------------------------------------------ --error-format json
def test_error_format_json_stays_json_with_c1_and_bidi_in_a_message():
    """A server error body with U+009B and U+202E: the stderr object is JSON of the same message
    (was: ``\\x9b`` written inside a JSON string, which no JSON reader accepts)."""
    body = {"error": "bad\x9b2J \u202e x"}
    with start_scripted({"/openapi/jobs/J1/report": json_reply(body, 400)}) as srv:
        result = subprocess.run([sys.executable, "-m", "benchloop", "--host", srv.url, "--api-key", API_KEY,
                                 "--error-format", "json", "report", "get", "-j", "J1"], capture_output=True,
                                timeout=60)
    err = result.stderr.decode("utf-8")
    assert result.returncode == 1 and raw_hiding(err) == []
    message = json.loads(err)["failures"][0]["message"]
    assert message == "API error 400: " + json.dumps(body, ensure_ascii=False)
