"""Where the API key goes and where files land (README "Differences"; docs/contract.md 8.2, 8.5, 8.6).

The key must only travel to the configured backend origin: not to the
export's ``download_url`` host, not to the host an artifact proxy redirects
to.  Ids and server-supplied names must never make the client write outside
the output root.

Each test runs the real CLI against small stdlib HTTP servers on 127.0.0.1:
one plays the backend (a test double of the server, not of httpx), another
one, on another port and therefore another origin, plays the object store and
records the headers it receives.
"""

from __future__ import annotations

import gzip
import json
import posixpath
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest
from support import API_KEY, NOT_FOUND, Answer, Origin, binary, js, redirect


def cli(bl, origin: Origin, *args: str):
    return bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", *args)


def assert_no_key(origin: Origin) -> None:
    assert origin.seen, "the foreign origin was never asked"
    for seen in origin.seen:
        assert "x-api-key" not in seen.headers, seen
        assert all(API_KEY not in value for value in seen.headers.values()), seen


def assert_key_on_api_calls(origin: Origin) -> None:
    api = [s for s in origin.seen if s.path.startswith("/openapi/")]
    assert api
    for seen in api:
        assert seen.headers.get("x-api-key") == API_KEY, seen


# ------------------------------------------------------- export download_url
ROWS = [
    {"group_id": "G1", "job_id": "J2", "step": 0, "text": "naïve ✓"},
    {"group_id": "G1", "jobId": "J1", "step": 0},
    {"group_id": "G1", "job_id": "J2", "step": 1},
    {"group_id": "G1", "job_id": "JX", "step": 0},
]
EXPECTED_DOC = {"group_id": "G1", "trajectories": [
    {"job_id": "J1", "trajectory": [ROWS[1]]},
    {"job_id": "J2", "trajectory": [ROWS[0], ROWS[2]]},
    {"job_id": "J3", "trajectory": []},
    {"job_id": "JX", "trajectory": [ROWS[3]]},  # only known from the rows: appended
]}
EXPORT = gzip.compress("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS).encode())


def export_backend(origins, via_redirect: bool) -> tuple[Origin, Origin]:
    oss = origins(lambda path, query: binary(EXPORT) if path == "/export/G1.jsonl.gz" else NOT_FOUND)
    holder: dict[str, Origin] = {}

    def answer(path: str, query: dict[str, str]) -> Answer:
        own = holder["backend"].url
        if path == "/openapi/groups/G1/trace-trajectory/download":
            url = f"{own}/export-redirect" if via_redirect else f"{oss.url}/export/G1.jsonl.gz?sig=s"
            return js({"status": "succeeded", "download_url": url})
        if path == "/export-redirect":
            return redirect(f"{oss.url}/export/G1.jsonl.gz?sig=s")
        if path == "/openapi/groups/G1/job-ids":
            return js({"group_id": "G1", "job_ids": ["J1", "J2", "J3"]})
        return NOT_FOUND

    holder["backend"] = origins(answer, require_key=True)
    return holder["backend"], oss


@pytest.mark.parametrize("via_redirect", [False, True], ids=["direct-url", "backend-redirects"])
@pytest.mark.parametrize("action", ["get", "download"])
def test_export_download_url_on_another_origin_gets_no_key(bl, origins, tmp_path, via_redirect, action):
    backend, oss = export_backend(origins, via_redirect)
    out = tmp_path / "out"
    result = cli(bl, backend, "trajectory", action, "-g", "G1", "-o", str(out))
    assert result.code == 0, result.err
    if action == "get":
        assert json.loads(result.out) == [EXPECTED_DOC]
    else:
        text = (out / "G1" / "trajectory.json").read_text(encoding="utf-8")
        assert text == json.dumps(EXPECTED_DOC, indent=2, ensure_ascii=False) + "\n"
    assert [s.path for s in oss.seen] == ["/export/G1.jsonl.gz"]
    assert_no_key(oss)
    assert_key_on_api_calls(backend)


# ------------------------------------------------------- artifact redirect
ARTIFACT = b"\x1f\x8b artifact bytes from the object store"


def artifact_backend(origins) -> tuple[Origin, Origin]:
    oss = origins(lambda path, query: binary(ARTIFACT) if path == "/oss/J1/result.tgz" else NOT_FOUND)

    def answer(path: str, query: dict[str, str]) -> Answer:
        if path == "/openapi/jobs/J1/artifacts":
            return js({"job_id": "J1", "artifacts": [
                {"name": "result.tgz", "url": f"{oss.url}/oss/J1/result.tgz?sig=s"}]})
        if path == "/openapi/jobs/J1/artifacts/download":
            return redirect(f"{oss.url}/oss/J1/result.tgz?sig=s")
        if path == "/openapi/jobs" and query.get("group_id") == "G1":
            return js({"jobs": [{"job_id": "J1", "created_at": "2026-07-01T00:00:00"}], "total": 1})
        if path == "/openapi/trajectory-download-tasks/TX":
            return js({"task_id": "TX", "group_id": "G1", "job_ids": ["J1"]})
        return NOT_FOUND

    return origins(answer, require_key=True), oss


@pytest.mark.parametrize(("args", "dest"), [
    (["-j", "J1"], "J1/result.tgz"),
    (["-g", "G1"], "G1/J1/result.tgz"),
    (["--task-id", "TX"], "TX/J1.tgz"),
])
def test_artifact_proxy_redirect_to_another_origin_gets_no_key(bl, origins, tmp_path, args, dest):
    backend, oss = artifact_backend(origins)
    out = tmp_path / "out"
    result = cli(bl, backend, "artifacts", "download", *args, "-o", str(out))
    assert result.code == 0, result.err
    assert (out / dest).read_bytes() == ARTIFACT
    assert [s.path for s in oss.seen] == ["/oss/J1/result.tgz"]
    assert_no_key(oss)
    assert_key_on_api_calls(backend)
    assert any(s.path == "/openapi/jobs/J1/artifacts/download" for s in backend.seen)


# ------------------------------------------------------ ids and local paths
EVIL_JOBS = ["../../escape", "a/b", "c\\d", "/abs", "%2e%2e%2f", "..\\..\\win"]
EVIL_NAMES = ["../../escape.tgz", "..", ".", "a/b.tgz", "c\\d.tgz", "/abs.tgz", ""]
EVIL_MEDIA = [
    {"mime_type": "image/png", "oss_uri": "oss://b/x/.."},
    {"mime_type": "image/png", "oss_uri": "oss://b/../../../escape.png"},
    {"mime_type": "image/png", "oss_uri": "oss://b/y/..%2F..%2Fz.png"},
]


def evil_answer(base: Callable[[], str]) -> Callable[[str, dict[str, str]], Answer]:
    def answer(path: str, query: dict[str, str]) -> Answer:
        if m := re.fullmatch(r"/openapi/jobs/([^/]+)/trajectory", path):
            job = unquote(m.group(1))
            return js({"job_id": job, "trajectory": [{"step": 0, "messages": [
                {"trace_media": media} for media in EVIL_MEDIA]}]})
        if m := re.fullmatch(r"/openapi/jobs/([^/]+)/meta", path):
            return js({"job_id": unquote(m.group(1))})
        if re.fullmatch(r"/openapi/jobs/([^/]+)/artifacts", path):
            return js({"artifacts": [{"name": n, "url": "https://oss.invalid/x"} for n in EVIL_NAMES]})
        if m := re.fullmatch(r"/openapi/jobs/([^/]+)/artifacts/download", path):
            return binary(b"bytes of " + m.group(1).encode())
        if path == "/openapi/jobs":
            page = [{"job_id": j, "created_at": "2026-07-01T00:00:00"} for j in EVIL_JOBS]
            return js({"jobs": page if int(query.get("skip", 0)) == 0 else [], "total": len(EVIL_JOBS)})
        if m := re.fullmatch(r"/openapi/groups/([^/]+)/trace-trajectory/download", path):
            return js({"status": "succeeded", "download_url": f"{base()}/export/{m.group(1)}"})
        if re.fullmatch(r"/openapi/groups/([^/]+)/job-ids", path):
            return js({"job_ids": EVIL_JOBS})
        if path.startswith("/export/"):
            rows = "".join(json.dumps({"job_id": j, "step": 0}) + "\n" for j in EVIL_JOBS)
            return binary(gzip.compress(rows.encode()))
        if re.fullmatch(r"/openapi/trajectory-download-tasks/[^/]+", path):
            return js({"task_id": "TEVIL", "group_id": "../G", "job_ids": EVIL_JOBS})
        if path == "/openapi/getTrajV2/mediaFile":
            return binary(b"\x89PNG media", "image/png")
        return NOT_FOUND

    return answer


@pytest.fixture
def evil(origins):
    holder: dict[str, Origin] = {}
    holder["o"] = origins(evil_answer(lambda: holder["o"].url), require_key=True)
    return holder["o"]


def written(tmp_path: Path) -> tuple[Path, list[Path]]:
    """The output root and every file under it; fails if anything landed beside it."""
    root = tmp_path / "a" / "out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["out"]
    found = [p for p in tmp_path.rglob("*") if p.is_file()]
    for path in found:
        assert path.resolve().is_relative_to(root.resolve()), path
    return root, found


def assert_safe_entries(archive: Path) -> list[str]:
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
    for name in names:
        assert not name.startswith("/") and "\\" not in name, name
        assert ".." not in name.split("/"), name
        assert not posixpath.normpath(name).startswith(".."), name
    return names


def test_job_ids_stay_inside_the_root_trajectory(bl, evil, tmp_path):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, "trajectory", "download", *[a for j in EVIL_JOBS for a in ("-j", j)], "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert len(found) == len(EVIL_JOBS)
    assert {p.parent for p in found} == {root}  # one flat file per id, no sub-directories
    assert sorted(json.loads(p.read_text())["job_id"] for p in found) == sorted(EVIL_JOBS)
    # Each id is one percent-encoded segment of the request path.
    paths = [s.path for s in evil.seen]
    assert len(paths) == len(EVIL_JOBS)
    assert all(re.fullmatch(r"/openapi/jobs/[^/]+/trajectory", p) for p in paths), paths


def test_group_ids_stay_inside_the_root_trajectory(bl, evil, tmp_path):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, "trajectory", "download", "-g", "../../G", "-g", "x/../../y", "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert len(found) == 2
    assert all(p.name == "trajectory.json" and p.parent.parent == root for p in found)


def test_artifact_names_and_ids_stay_inside_the_root(bl, evil, tmp_path):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, "artifacts", "download", "-j", "../../escape", "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert len(found) == len(EVIL_NAMES)
    assert len({p.parent for p in found}) == 1 and found[0].parent.parent == root


def test_group_artifacts_stay_inside_the_root(bl, evil, tmp_path):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, "artifacts", "download", "-g", "../G", "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert len(found) == len(EVIL_JOBS) * len(EVIL_NAMES)
    assert all(p.parent.parent.parent == root for p in found)
    assert len({p.parent for p in found}) == len(EVIL_JOBS)


def test_task_artifacts_stay_inside_the_root(bl, evil, tmp_path):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, "artifacts", "download", "--task-id", "TEVIL", "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert len(found) == len(EVIL_JOBS)
    assert all(p.parent == root / "TEVIL" and p.suffix == ".tgz" for p in found)


@pytest.mark.parametrize(("resource", "archive"), [("trajectory", "TEVIL_trajectories.zip"),
                                                   ("metadata", "TEVIL_metadata.zip")])
def test_task_archive_entries_are_safe(bl, evil, tmp_path, resource, archive):
    out = tmp_path / "a" / "out"
    result = cli(bl, evil, resource, "download", "--task-id", "TEVIL", "-o", str(out))
    assert result.code == 0, result.err
    root, found = written(tmp_path)
    assert found == [root / archive]
    names = assert_safe_entries(root / archive)
    prefix = "trajectories/" if resource == "trajectory" else "metadata/"
    assert len([n for n in names if n.startswith(prefix)]) == len(EVIL_JOBS)
    if resource == "trajectory":
        # Three media per job, every one a single file name under source/<job>/.
        media = [n for n in names if n.startswith("source/")]
        assert len(media) == 3 * len(EVIL_JOBS)
        assert all(len(n.split("/")) == 3 for n in media), media


@pytest.mark.parametrize("job", ["..", "."])
def test_dot_ids_are_one_url_segment(bl, evil, job):
    cli(bl, evil, "trajectory", "get", "-j", job)
    paths = [s.path for s in evil.seen]
    assert len(paths) == 1
    match = re.fullmatch(r"/openapi/jobs/([^/]+)/trajectory", paths[0])
    assert match, paths
    assert match.group(1) not in (".", "..")
