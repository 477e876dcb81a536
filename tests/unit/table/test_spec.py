"""The endpoint table end to end: it compiles, broken tables are refused by load_spec, the cache.

Every single lint message (and the compiler's own errors, exactly) is tested in
tests/unit/table/test_speclint.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from benchloop.table import load as specload
from benchloop.table.lint import lint
from benchloop.table.load import SpecError, load_spec, spec_dir

SPEC = spec_dir() / "benchloop.yaml"


def compile_text(tmp_path: Path, text: str):
    path = tmp_path / "benchloop.yaml"
    path.write_text(text, encoding="utf-8")
    return load_spec(path, use_cache=False)


def edited(mutate) -> str:
    doc = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    mutate(doc)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def test_shipped_table_compiles_and_passes_lints():
    spec = load_spec(SPEC, use_cache=False)
    assert lint(spec) == []
    assert {"metrics", "overview", "jobs", "tasks", "report"} <= set(spec["resources"])


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["resources"]["report"]["actions"]["get"]["dimensions"]["job"]["parts"]["report"]
         .update(request="nope"), "unknown endpoint 'nope'"),
        (lambda d: d["endpoints"]["job_report"].update(path="/openapi/jobs/{jobb}/report"),
         "path variable {jobb} of endpoint 'job_report' is not bound"),
        (lambda d: d["resources"]["jobs"]["actions"]["get"]["dimensions"]["group"]["parts"]["all"]
         ["pagination"].update(mode="sideways"),
         "pagination.mode: 'sideways' is not one of ['single_page', 'unique_scan', 'task_scan']"),
        (lambda d: d["resources"]["report"]["actions"]["download"]["dimensions"]["job"]["parts"]["report"]
         .update(shape="nope"), "parts.report.shape: 'nope' is not one of ['raw', 'job_metrics'"),
        (lambda d: d["resources"]["report"]["actions"]["download"]["dimensions"]["job"]["parts"]["report"]
         .update(file="{group}/job_list.json"), "also used by"),
        (lambda d: d["resources"]["report"]["actions"]["download"]["dimensions"]["job"]["parts"]["report"]
         .update(file="{group}_x.md"), "file variable {group} is not bound"),
        (lambda d: d["endpoints"]["job_list"]["query"].update(extra="{no_such_option}"),
         "{no_such_option} of endpoint 'job_list' names no option"),
        (lambda d: d["resources"]["report"]["actions"]["download"]["dimensions"]["group"]["parts"]["jobs"]
         .update(each="nope"), "unknown enumeration 'nope'"),
        (lambda d: d["resources"]["jobs"]["actions"]["get"]["options"].update(timeout="page"),
         "flag --page defined twice"),
        (lambda d: d["resources"]["jobs"]["actions"]["get"]["options"].update(x="no_such"),
         "refers to unknown option 'no_such'"),
    ],
)
def test_load_spec_refuses_broken_references(tmp_path, mutate, expected):
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, edited(mutate))
    assert expected in str(err.value)


def test_compile_is_cached_and_invalidated_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    specload._MEMO.clear()
    path = tmp_path / "benchloop.yaml"
    path.write_text(SPEC.read_text(encoding="utf-8"), encoding="utf-8")
    first = load_spec(path)
    files = list((tmp_path / "cache").glob("spec-*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text()) == first
    # A second process would read the JSON: prove it is used by poisoning it.
    specload._MEMO.clear()
    poisoned = dict(first, poisoned=True)
    files[0].write_text(json.dumps(poisoned))
    assert load_spec(path).get("poisoned") is True
    # Changing the YAML changes the key: a fresh compile, a second cache file.
    specload._MEMO.clear()
    path.write_text(path.read_text() + "\n# comment\n", encoding="utf-8")
    assert "poisoned" not in load_spec(path)
    assert len(list((tmp_path / "cache").glob("spec-*.json"))) == 2


def test_cache_key_depends_on_package_version(monkeypatch):
    raw = SPEC.read_bytes()
    key = specload.cache_key(raw)
    monkeypatch.setattr(specload, "__version__", "99.0")
    assert specload.cache_key(raw) != key


def test_generated_reference_docs_match_the_table():
    """The checked-in docs/reference is what the table generates (make docs-check)."""
    from codegen import docs

    stale = [path for path, text in docs.render().items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    assert stale == [], "run `make docs` and commit"
