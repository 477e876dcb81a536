"""``engine/sync.py``: what ``pull --sync`` reads back (the job list, the manifest) in bounded memory.

The job list is read an item at a time: a fat list (3,000 jobs of 8 kB) is listed with a
tracemalloc peak of a few MB where ``json.load`` of the same file (what it did before) holds
all of it, so the bound can fail.  The manifest is read an entry at a time and written an
entry at a time, in the same bytes as the whole document's ``jsontext.dumps`` (a manifest of
an older bl reads the same), and what cannot be read or is not ours is said and ignored as
before.
"""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest

from benchloop.base import jsontext
from benchloop.base.log import Log
from benchloop.engine.runtime import Runtime
from benchloop.engine.sync import VERSION, GroupSync, Manifest
from benchloop.table.load import load_model

SPEC = load_model()
PULL = SPEC.action("pull", "pull")
SYNC = PULL.compose.sync


def _group_sync(root) -> GroupSync:
    rt = Runtime(SPEC, Log(quiet=True, stream=io.StringIO()), False, 4, str(root), lambda _pool: None, io.StringIO())
    return GroupSync(rt, PULL.compose, "G1", {"output_dir": str(root)}, ["jobs", "report"], lambda *a: None)


def _job_list(root, jobs: list[dict]) -> None:
    (root / "G1").mkdir(exist_ok=True)
    with open(root / "G1" / "job_list.json", "w", encoding="utf-8") as out:
        jsontext.write(out, {"group_id": "G1", "total": len(jobs), "jobs": jobs}, True)


def test_the_job_list_is_read_an_item_at_a_time(tmp_path):
    jobs = [{"job_id": f"J{i}", "status": "failed" if i % 3 else "running", "updated_at": None,
             "log": f"{i:08d}" * 1000} for i in range(3000)]
    _job_list(tmp_path, jobs)
    path = tmp_path / "G1" / "job_list.json"
    tracemalloc.start()
    try:
        states = _group_sync(tmp_path).listed()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        with open(path, encoding="utf-8") as handle:
            assert len(json.load(handle)["jobs"]) == 3000  # the old way, for the bound's sake
        whole = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert states == {j["job_id"]: {f: j.get(f) for f in SYNC.state} for j in jobs}
    assert list(states) == [j["job_id"] for j in jobs]
    assert peak < 8_000_000 < path.stat().st_size < whole
    assert len({id(s) for s in states.values()}) == 2  # equal states are one dict


def test_the_ids_are_the_key_else_another_id_field(tmp_path):
    _job_list(tmp_path, [{"job_id": "A", "status": "x"}, {"id": "B", "status": "y"}, {"status": "no id"}, 7,
                         {"job_id": 3, "id": "C"}])
    assert _group_sync(tmp_path).listed() == {"A": {"status": "x", "updated_at": None},
                                              "B": {"status": "y", "updated_at": None},
                                              "C": {"status": None, "updated_at": None}}


@pytest.mark.parametrize(("text", "said"), [('{"group_id": "G1", "jobs": [{"job_id": "A"},', "cannot read"),
                                            ('{"group_id": "G1"}', "has no jobs list"),
                                            ('[{"job_id": "A"}]', "has no jobs list")])
def test_a_job_list_that_cannot_be_read_fails_the_sections(tmp_path, text, said):
    (tmp_path / "G1").mkdir()
    (tmp_path / "G1" / "job_list.json").write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match=said):
        _group_sync(tmp_path).listed()


def _document(items: dict) -> dict:
    return {"version": VERSION, "group_id": "G1", "key": SYNC.key, "state": list(SYNC.state), "items": items}


def _manifest(tmp_path, text: str | None = None) -> tuple[Manifest, str]:
    path = tmp_path / ".bl-sync.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    stream = io.StringIO()
    return Manifest(str(tmp_path), str(path), SYNC, "G1", Log(stream=stream)), stream.getvalue()


ITEMS = {f"J{i}": {"state": {"status": "failed", "updated_at": f"2026-01-0{i % 9 + 1}"},
                   "sections": {"report": [f"G1/J{i}_report.md"], "trajectory": []},
                   **({"permanent": {"report": [{"id": f"G1:report:J{i}", "message": "é 404"}]}} if i % 5 == 0 else {})}
         for i in range(50)}


def test_the_manifest_reads_and_writes_as_the_whole_document_did(tmp_path):
    old = jsontext.dumps(_document(ITEMS), False)  # what save wrote before (files.write_json_file)
    manifest, said = _manifest(tmp_path, old)
    assert said == "" and manifest.items == ITEMS
    states = {i: e["state"] for i, e in ITEMS.items()}
    manifest.save(states)
    assert (tmp_path / ".bl-sync.json").read_text(encoding="utf-8") == old
    manifest.save({i: s for i, s in list(states.items())[::-1][:10]})  # list order; unlisted items go
    assert json.loads((tmp_path / ".bl-sync.json").read_text(encoding="utf-8")) == _document(
        {i: ITEMS[i] for i in list(ITEMS)[::-1][:10]})
    manifest.save({})
    assert _manifest(tmp_path)[0].items == {}


@pytest.mark.parametrize(("text", "said"), [
    (jsontext.dumps(_document(ITEMS), False)[:-30], "cannot be read"),
    ("{not json", "cannot be read"),
    (json.dumps({**_document(ITEMS), "version": VERSION + 1}), "not one this bl writes"),
    (json.dumps({**_document(ITEMS), "key": "id"}), "not one this bl writes"),
    (json.dumps({"items": ITEMS, **{k: v for k, v in _document({}).items() if k != "items"}}), ""),  # order aside
    (json.dumps({k: v for k, v in _document({}).items() if k != "items"}), "not one this bl writes"),
    (json.dumps({**_document({}), "items": []}), "not one this bl writes"),
    ("[]", "not one this bl writes"),
])
def test_a_manifest_not_ours_or_unreadable_is_said_and_ignored(tmp_path, text, said):
    manifest, warned = _manifest(tmp_path, text)
    if said:
        assert said in warned and manifest.items == {}
    else:
        assert warned == "" and manifest.items == ITEMS


def test_entries_not_ours_are_left_out_and_paths_outside_are_named(tmp_path):
    items = {"A": {"state": {"status": "x"}, "sections": {"report": ["../x"], "trajectory": ["G1/t"]}},
             "B": "not an entry", "C": {"state": None, "sections": []}}
    manifest, warned = _manifest(tmp_path, json.dumps(_document(items)))
    assert manifest.items == {"A": {"state": {"status": "x"}, "sections": {"trajectory": ["G1/t"]}}}
    assert "1 path(s) outside the output root ('../x')" in warned
