"""``bl compare --report-dir DIR`` against a hostile backend: what one bad page may cost, where
the pages go, and what the folder's directories may be.

A stand-in backend on loopback serves two groups whose every instance changed (BASE fails
it, CAND passes it), so the report writes one side-by-side page per instance.  Each test
makes one thing hostile:

* a trajectory that the page cannot be made of: that page is lost (said on stderr with its
  instance, exit 1), the index and every other page are written, the data still printed;
* an instance id over the file-name limit: its page keeps the ``.html`` suffix (the name is
  shortened with a hash), so the index links it and a later run's cleanup removes it;
* a symbolic link at ``DIR/instances`` or ``DIR/instances/<candidate>``: nothing is written
  through it (the files of the directory it points to stay as they were).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from html_tree import parse
from support import API_KEY, NOT_FOUND, js

GROUPS = ("BASE", "CAND")


def backend(instances: list[str], trajectories: dict[str, Any] | None = None):
    """The ``answer`` of a backend where CAND passes every instance BASE fails; ``trajectories``
    overrides the trajectory answer of some jobs (by job id)."""
    jobs = {g: [(f"{g}-{k}", name, float(g == "CAND")) for k, name in enumerate(instances)] for g in GROUPS}
    trajectories = trajectories or {}

    def answer(path: str, query: dict[str, str]):
        group = jobs.get(query.get("group_id", ""))
        skip, limit = int(query.get("skip", 0)), int(query.get("limit", 50))
        if path == "/openapi/jobs" and group is not None:
            return js({"total": len(group), "jobs": [
                {"job_id": j, "group_id": query["group_id"], "status": "succeeded", "instance_id": i,
                 "created_at": "2026-07-01"} for j, i, _ in group[skip:][:limit]]})
        if path == "/openapi/metrics" and group is not None:
            return js({"total": len(group), "metrics": [
                {"job_id": j, "metrics": [{"type": "eval", "data": {"task_score": s}}]}
                for j, _, s in group[skip:][:limit]]})
        if path.endswith("/trajectory"):
            job = path.split("/")[3]
            if job in trajectories:
                return 200, {"Content-Type": "application/json"}, trajectories[job]
            return js({"job_id": job, "trajectory": [{"step": 0, "role": "tool", "tool": "bash", "content": job}]})
        return NOT_FOUND

    return answer


def report_dir(bl, origins, folder: Path, instances: list[str], trajectories: dict[str, Any] | None = None):
    origin = origins(backend(instances, trajectories))
    return bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "compare", "-g", "BASE", "-g", "CAND",
              "--report-dir", str(folder))


def linked(folder: Path) -> set[str]:
    """The pages ``DIR/index.html`` links (relative paths, as a browser opens them)."""
    _, root = parse((folder / "index.html").read_text(encoding="utf-8"))
    return {unquote(a.attrs["href"]) for a in root.find_all("a")}


def written(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"index.html"}


# ------------------------------------------------------------ one bad page
HUGE = "9" * 400  # an integer no float holds


def test_a_trajectory_with_a_huge_number_has_its_page(bl, origins, tmp_path):
    """A 400-digit ``tokens`` (an integer no float holds) is shown as it came, on its page."""
    bad = b'{"job_id": "CAND-1", "trajectory": [{"step": 0, "role": "tool", "tokens": ' + HUGE.encode() + b"}]}"
    folder = tmp_path / "report"
    result = report_dir(bl, origins, folder, ["inst-a", "inst-b", "inst-c"], {"CAND-1": bad})
    assert result.code == 0, result.err
    assert linked(folder) == written(folder) and len(written(folder)) == 3
    page = (folder / "instances" / "CAND" / "inst-b.html").read_text(encoding="utf-8")
    assert HUGE in page


def test_a_page_that_fails_is_reported_with_its_instance_and_the_rest_is_written(bl, origins, tmp_path,
                                                                                 monkeypatch):
    """Whatever a page fails on (here: the page's renderer raising on one trajectory), that page
    is lost and said on stderr with its instance, the exit code is 1, and the index, the other
    pages and the printed comparison are all there."""
    from benchloop.viewer import page

    real = page.render

    def render(trials, secrets=()):
        if any(t.get("job_id") == "CAND-1" for t in trials):
            raise OverflowError("int too large to convert to float")
        return real(trials, secrets)

    monkeypatch.setattr(page, "render", render)
    folder = tmp_path / "report"
    result = report_dir(bl, origins, folder, ["inst-a", "inst-b", "inst-c"])
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err
    [line] = [x for x in result.err.splitlines() if "inst-b" in x]
    assert line.startswith("[error] --report-dir: no page for instance inst-b of CAND: internal error (OverflowError")
    assert json.loads(result.out)[0]["candidate"] == "CAND"  # the comparison is printed
    assert written(folder) == linked(folder) == {"instances/CAND/inst-a.html", "instances/CAND/inst-c.html"}
    assert not list(folder.rglob("*.tmp")) and not [p for p in folder.rglob("*") if p.name.startswith(".")]


# ---------------------------------------------------------------- long ids
@pytest.mark.parametrize("length", [199, 200, 240, 600])
def test_a_long_instance_id_keeps_its_page_suffix_and_link(bl, origins, tmp_path, length):
    long_a, long_b = "a" * length, "a" * (length - 1) + "b"  # the same beginning: the names must differ
    folder = tmp_path / "report"
    result = report_dir(bl, origins, folder, [long_a, long_b, "short"])
    assert result.code == 0, result.err
    pages = written(folder)
    assert len(pages) == 3 and linked(folder) == pages
    for name in pages:
        assert name.startswith("instances/CAND/") and name.endswith(".html") and name.count("/") == 2, name
        assert len(os.path.basename(name).encode()) <= 200
    # A later run that lists none of them removes them all (what it does not link).
    again = report_dir(bl, origins, folder, ["other"])
    assert again.code == 0, again.err
    assert written(folder) == linked(folder) == {"instances/CAND/other.html"}


def test_bl_view_names_a_long_instance_page_with_its_extension(bl, origins, tmp_path):
    long = "i" * 300
    origin = origins(backend([long]))
    out = tmp_path / "out"
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "-o", str(out), "view",
                "--instance", long, "-g", "BASE", "-g", "CAND")
    assert result.code == 0, result.err
    [page] = [p for p in out.rglob("*") if p.is_file()]
    assert page.parent == out and page.suffix == ".html" and len(page.name.encode()) <= 200


# ------------------------------------------------------------------ symlinks
@pytest.mark.parametrize("where", ["instances", "instances/CAND"])
def test_no_page_is_written_through_a_symlinked_directory(bl, origins, tmp_path, where):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "CAND").mkdir(parents=True)
    victims = {elsewhere / "inst-a.html": "not yours", elsewhere / "CAND" / "inst-a.html": "not yours either"}
    for path, text in victims.items():
        path.write_text(text, encoding="utf-8")
    folder = tmp_path / "report"
    (folder / where).parent.mkdir(parents=True, exist_ok=True)
    (folder / where).symlink_to(elsewhere if where == "instances" else elsewhere / "CAND", target_is_directory=True)
    before = {p: p.read_text(encoding="utf-8") for p in elsewhere.rglob("*") if p.is_file()}
    result = report_dir(bl, origins, folder, ["inst-a", "inst-b"])
    after = {p: p.read_text(encoding="utf-8") for p in elsewhere.rglob("*") if p.is_file()}
    assert after == before  # nothing written, replaced or removed through the link
    assert "symbolic link" in result.err and result.code == 1, result.err
    assert (folder / "index.html").is_file()
    assert (folder / where).is_symlink()  # refused, not replaced
    _, root = parse((folder / "index.html").read_text(encoding="utf-8"))
    assert not root.find_all("a")  # no page written: none linked


def test_real_dirs_makes_levels_and_never_follows_a_link(tmp_path):
    from benchloop.base.files import NotOurs, real_dirs

    assert real_dirs(str(tmp_path), "a", "b") == str(tmp_path / "a" / "b") and (tmp_path / "a" / "b").is_dir()
    assert real_dirs(str(tmp_path), "a", "b") == str(tmp_path / "a" / "b")  # already there: fine
    (tmp_path / "target").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path / "target", target_is_directory=True)
    (tmp_path / "a" / "file").write_text("x", encoding="utf-8")
    for name, words in (("link", "symbolic link"), ("file", "not a directory")):
        with pytest.raises(NotOurs, match=words):
            real_dirs(str(tmp_path), "a", name, "c")
    assert not list((tmp_path / "target").iterdir())


def test_the_python_client_reports_a_lost_page_as_a_failure(origins, tmp_path, monkeypatch):
    """``bl.compare(report_dir=...)``: the lost page is a failure of the call (PartialFailure naming
    the page and its instance), with the comparison and the index there."""
    from benchloop import Client
    from benchloop.sdk.errors import PartialFailure
    from benchloop.viewer import page

    real = page.render
    monkeypatch.setattr(page, "render", lambda trials, secrets=(): (_ for _ in ()).throw(ValueError("boom"))
                        if any(t.get("job_id") == "CAND-0" for t in trials) else real(trials, secrets))
    origin = origins(backend(["inst-a", "inst-b"]))
    folder = tmp_path / "report"
    with Client(host=origin.url, api_key=API_KEY, retry=0) as bl, pytest.raises(PartialFailure) as failed:
        bl.compare(group=["BASE", "CAND"], report_dir=folder)
    [(path, message)] = failed.value.failures
    assert path.endswith("inst-a.html") and "no page for instance inst-a of CAND: internal error (ValueError: boom)" in message
    assert failed.value.results[0]["candidate"] == "CAND"
    assert written(folder) == linked(folder) == {"instances/CAND/inst-b.html"}
