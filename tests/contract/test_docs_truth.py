"""Sentences of the docs held to what bl does (those a review found untrue once).

* docs/contract.md 4: the fields `config show` prints, `sources` included;
* docs/contract.md 2.1: the forms `--host` takes (a path prefix yes, a query no);
* README: the `artifacts download -g G1 --include '*.tgz'` example's counts;
* README and docs/contract.md 6: the exit code of a wait that timed out;
* docs/compare.md: how many changes `--output markdown` lists against the table;
* (docs/mcp.md's tool counts and sizes: tests/cli/mcp/test_mcp_toolsets.py; the README's
  `--query` on `config show`: tests/cli/config/test_keys.py.)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from support import ROOT, js

CONTRACT = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_contract_lists_the_fields_config_show_prints(bl):
    claimed = re.search(r"\*\*`config show`\*\*.*?prints\s+`\{(.*?)\}`", CONTRACT, re.S).group(1)
    fields = re.findall(r'"(\w+)"', claimed)
    shown = json.loads(bl("config", "show").out)
    assert fields == list(shown) and "sources" in fields
    assert list(shown["sources"]) == ["host", "api_key", "output_dir"]


def test_host_with_a_path_prefix_is_taken_and_used(bl, origins):
    backend = origins(lambda path, query: js({"job_id": "J1"}))
    result = bl("--host", f"{backend.url}/api/", "--api-key", "k", "--retry", "0", "metrics", "get", "-j", "J1")
    assert result.code == 0, result.err
    assert [seen.path for seen in backend.seen] == ["/api/openapi/metrics/J1"]
    assert "`https://host/api/` sends `https://host/api/openapi/...`" in CONTRACT


def test_host_with_a_query_is_refused_as_the_contract_says(bl):
    result = bl("--host", "https://host/api?x=1", "metrics", "get", "-j", "J1")
    assert result.code == 2
    message = "a base URL has no query (?...) or fragment (#...); requests go to <base URL>/openapi/..."
    assert message in result.err and message in CONTRACT
    result = bl("--host", "host:8765", "metrics", "get", "-j", "J1")
    form = "expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]"
    assert result.code == 2 and form in result.err and form in CONTRACT


def test_the_readme_artifacts_example_counts(api, tmp_path):
    line = re.search(r"bl artifacts download -g G1 --include '\*\.tgz' -o \./out(.*?)\nbl ", README, re.S).group(1)
    assert "32 files" in line and "31 artifacts and 1 empty placeholder" in line and "6 jobs have none" in line
    filtered = api("artifacts", "download", "-g", "G1", "--include", "*.tgz", "-o", str(tmp_path / "a"))
    files = [Path(d) / f for d, _, names in os.walk(tmp_path / "a") for f in names]
    assert filtered.code == 1 and len(files) == 32
    assert sum(1 for f in files if f.stat().st_size < 100) == 1  # the placeholder
    assert "(no_artifact)" not in filtered.err  # as the README says: nothing for the 6 with --include
    every = api("artifacts", "download", "-g", "G1", "-o", str(tmp_path / "b"))
    assert len(re.findall(r"^no artifact for job=\S+ \(no_artifact\)$", every.err, re.M)) == 6


def test_the_wait_timeout_code_is_documented_beside_the_others():
    assert "124 a wait timed out" in " ".join(README.split())
    assert re.search(r"^\| 124 \| a wait timed out", CONTRACT, re.M)


def test_compare_md_says_how_many_changes_markdown_and_the_table_list():
    from benchloop.compare import display

    text = " ".join((ROOT / "docs" / "compare.md").read_text(encoding="utf-8").split())
    table, marked = display.LIMITS["table"], display.LIMITS["markdown"]
    assert f"the first {table} in the table, {marked} in markdown" in text
