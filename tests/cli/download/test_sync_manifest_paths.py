"""`pull --sync` checks its manifest like every other path it reads or writes.

A manifest is data on disk: anyone who can write the output directory (or an old, edited
copy) can name paths outside the output root in it.  Such a path is never looked at (a
deleted report whose record says ``/etc/hostname`` is fetched again, with a warning), and
a manifest that is a symlink, or a directory, is refused before any request (exit 2),
never read through nor replaced.  Against the sandbox's live group GLIVE over loopback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

if os.name == "nt":  # symlinks need privileges there
    pytestmark = pytest.mark.skip("symlinks")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=4, tasks_per_group=2, live_jobs=6, live_pace=0)


@pytest.fixture(autouse=True)
def _live(live):
    return live


def sync(api, sandbox, out: Path):
    sandbox.reset_stats()
    result = api("pull", "-g", "GLIVE", "--sync", "--with", "report", "-o", str(out))
    return result, {k: v for k, v in sandbox.stats.items() if v}


def manifest_file(out: Path) -> Path:
    return out / "GLIVE" / ".bl-sync.json"


def jobs(out: Path) -> list[str]:
    return list(json.loads(manifest_file(out).read_text(encoding="utf-8"))["items"])


@pytest.mark.parametrize("outside", ["../outside.md", "/etc/hostname", "GLIVE/../../x.md", "", 7])
def test_a_recorded_path_outside_the_root_is_ignored_and_refetched(sandbox, api, tmp_path, outside):
    out = tmp_path / "out"
    first, _ = sync(api, sandbox, out)
    assert first.code == 0, first.err
    (tmp_path / "outside.md").write_text("not bl's", encoding="utf-8")  # "exists" for ../outside.md
    job = jobs(out)[0]
    data = json.loads(manifest_file(out).read_text(encoding="utf-8"))
    data["items"][job]["sections"]["report"] = [outside]
    manifest_file(out).write_text(json.dumps(data), encoding="utf-8")
    (out / "GLIVE" / f"{job}_report.md").unlink()  # deleted: the next sync must fetch it again

    again, requests = sync(api, sandbox, out)
    assert again.code == 0, again.err
    assert requests.get("job_report") == 1  # that job's report, and only it
    assert (out / "GLIVE" / f"{job}_report.md").is_file()
    assert "outside the output root" in again.err and repr(outside) in again.err
    recorded = json.loads(manifest_file(out).read_text(encoding="utf-8"))["items"][job]["sections"]["report"]
    assert recorded == [f"GLIVE/{job}_report.md"]
    assert (tmp_path / "outside.md").read_text(encoding="utf-8") == "not bl's"


def test_a_malformed_entry_is_fetched_again_not_a_crash(sandbox, api, tmp_path):
    first, _ = sync(api, sandbox, tmp_path)
    assert first.code == 0, first.err
    data = json.loads(manifest_file(tmp_path).read_text(encoding="utf-8"))
    one, two, *_ = data["items"]
    data["items"][one]["sections"] = ["report"]
    data["items"][two]["sections"]["report"] = "GLIVE/x.md"
    manifest_file(tmp_path).write_text(json.dumps(data), encoding="utf-8")
    again, requests = sync(api, sandbox, tmp_path)
    assert again.code == 0, again.err
    assert requests.get("job_report") == 2


@pytest.mark.parametrize("kind", ["symlink-outside", "symlink-inside", "directory"])
def test_a_manifest_that_is_not_a_regular_file_is_refused_before_any_request(sandbox, api, tmp_path, kind):
    out = tmp_path / "out"
    (out / "GLIVE").mkdir(parents=True)
    target = tmp_path / "elsewhere.json" if kind == "symlink-outside" else out / "GLIVE" / "kept.json"
    target.write_text('{"mine": true}', encoding="utf-8")
    if kind == "directory":
        manifest_file(out).mkdir()
    else:
        manifest_file(out).symlink_to(target)
    result, requests = sync(api, sandbox, out)
    assert result.code == 2, result.err
    assert "unexpected error" not in result.err
    assert "the manifest" in result.err and str(manifest_file(out)) in result.err
    assert requests == {}  # nothing asked, nothing downloaded
    assert target.read_text(encoding="utf-8") == '{"mine": true}'
    assert manifest_file(out).is_symlink() or manifest_file(out).is_dir()  # left as it was
    assert sorted(p.name for p in (out / "GLIVE").iterdir()) == sorted(
        [".bl-sync.json", *(["kept.json"] if kind != "symlink-outside" else [])])


def test_a_group_directory_that_leads_outside_is_refused(sandbox, api, tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "GLIVE").symlink_to(elsewhere)
    result, requests = sync(api, sandbox, out)
    assert result.code == 2, result.err
    assert "outside the output root" in result.err and requests == {}
    assert list(elsewhere.iterdir()) == []
