"""``base/jsonitems.py``: a list of a big JSON document read one item at a time.

Every document is also read by ``json.load``: the items must be its items, whatever the
layout and wherever the buffer is cut (``CHUNK`` down to one character); what json.load
refuses, this refuses; and the memory held stays one item and one buffer, where json.load
holds the whole document (checked with tracemalloc on the same file, so the bound can fail).
"""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest

from benchloop.base import jsonitems, jsontext

ITEMS = [{"job_id": f"J{i}", "status": ["succeeded", "failed"][i % 2], "score": i / 7, "n": 10 ** (i % 12),
          "text": "é\u2028\"\\/\n" * (i % 3), "nested": {"a": [1, 2.5e-7, None, True, False]}}
         for i in range(40)]
DOCUMENTS = {
    "pretty": jsontext.dumps({"group_id": "G", "total": 40, "jobs": ITEMS}, True),
    "compact": json.dumps({"group_id": "G", "jobs": ITEMS, "total": 40}, separators=(",", ":")),
    "spaced": " \n{ \"jobs\" :\t[ " + " ,\n ".join(json.dumps(i) for i in ITEMS) + " ] , \"after\" : {\"x\": [1]} }\n",
    "first": json.dumps({"jobs": ITEMS}),
    "empty list": json.dumps({"a": 1, "jobs": [], "b": "x"}),
    "scalars": json.dumps({"jobs": [1, -2.5, "x", None, True, [], {}, 12345678901234567890]}),
}


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, jsonitems.CHUNK])
@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_the_items_are_json_loads(monkeypatch, name, chunk):
    monkeypatch.setattr(jsonitems, "CHUNK", chunk)
    text = DOCUMENTS[name]
    assert list(jsonitems.items(io.StringIO(text), "jobs")) == json.loads(text)["jobs"]


@pytest.mark.parametrize("text", ['[{"jobs": []}]', '"jobs"', '{"job": []}', '{}', '{"jobs": {"a": 1}}',
                                  '{"jobs": null}'])
def test_a_document_without_the_list_says_so(text):
    with pytest.raises(jsonitems.MissingList):
        list(jsonitems.items(io.StringIO(text), "jobs"))


@pytest.mark.parametrize("chunk", [1, 5, jsonitems.CHUNK])
@pytest.mark.parametrize("text", [DOCUMENTS["pretty"][:-40], DOCUMENTS["compact"][:-1], '{"jobs": [1 2]}',
                                  '{"jobs": [1,]}', '{"jobs": [1]} x', '{"jobs": [1], "total": 4', '{"jobs": [12',
                                  '{1: 2, "jobs": []}', '', '{"jobs": [tru]}'])
def test_what_json_load_refuses_is_refused(monkeypatch, text, chunk):
    monkeypatch.setattr(jsonitems, "CHUNK", chunk)
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        list(jsonitems.items(io.StringIO(text), "jobs"))


def _peak(read) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_holds_one_item_and_a_buffer_not_the_document(tmp_path):
    """A 24 MB list of 3,000 items: reading it item by item peaks near one buffer (1 MB of
    characters: up to 4 MB as text), json.load at several times the file."""
    path = tmp_path / "job_list.json"
    with open(path, "w", encoding="utf-8") as out:
        jsontext.write(out, {"group_id": "G", "total": 3000,
                             "jobs": [{"job_id": f"J{i}", "status": "failed", "log": f"{i:08d}" * 1000}
                                      for i in range(3000)]}, True)
    size = path.stat().st_size
    assert size > 24_000_000

    def stream() -> None:
        with open(path, encoding="utf-8") as handle:
            for item in jsonitems.items(handle, "jobs"):
                assert item["status"] == "failed"

    def whole() -> None:
        with open(path, encoding="utf-8") as handle:
            assert len(json.load(handle)["jobs"]) == 3000

    bound = 6 * jsonitems.CHUNK
    assert _peak(stream) < bound
    assert _peak(whole) > size > bound  # what the bound tells apart
