"""``bl view``: the page of a job's trajectory, two trials side by side, and what feeds them.

Through the real command line against the sandbox (its comparison runs and its hostile
group): the page of every kind of job (media, no trajectory, hostile), what the header
says, the side-by-side page and its first difference, the listing for a terminal, the
errors, ``--open``, ``-o``, and ``bl compare --report-dir``.  The page is parsed
(``html_tree``) and checked for what a shared page must never have (script, requests,
handlers) and for what it must keep: every step and every field of the answer.  The
viewer's own functions are checked on shapes no backend sent yet (hypothesis).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from html_tree import parse
from hypothesis import given, settings
from hypothesis import strategies as st
from support import API_KEY, NOT_FOUND, binary, js

from benchloop.sandbox import payloads
from benchloop.sandbox.dataset import HOSTILE_JOBS, Dataset
from benchloop.viewer import listing, media, page, trials
from benchloop.viewer.trajectory import align, first_difference, read

CHANGED = "requests__requests-2334"  # BASE fails it, CAND2 passes it (bl compare -g BASE -g CAND2)


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160, hostile=True)


@pytest.fixture(scope="module")
def data():
    return Dataset(seed=7, groups=3, compare_jobs=160, hostile=True)


def view(api, tmp_path: Path, *args: str) -> tuple[object, str]:
    """``bl view ARGS -o tmp/page.html``: the result and the page's text."""
    target = tmp_path / "page.html"
    result = api("view", *args, "-o", str(target))
    return result, target.read_text(encoding="utf-8") if target.exists() else ""


# ---------------------------------------------------------------- safety
SAFE_SRC = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*")


def assert_safe(document: str) -> None:
    """No script, no handler, no request: only fragment links and data-URI images."""
    _, root = parse(document)
    for tag in ("script", "link", "iframe", "object", "embed", "base", "form", "svg", "image", "use", "video"):
        assert not root.find_all(tag), tag
    for node in root.iter():
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name)
            assert name not in ("srcset", "action", "formaction", "xlink:href", "style"), (node.tag, name)
            if name == "href":
                assert node.tag == "a" and re.fullmatch(r"#step--?\d+", value or ""), value
            if name == "src":
                assert node.tag == "img" and SAFE_SRC.fullmatch(value or ""), (value or "")[:80]
    [style] = root.find_all("style")
    assert "url(" not in style.all_text() and "@import" not in style.all_text()
    [csp] = [m for m in root.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp.attrs["content"] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert "\x1b" not in document and "\u202e" not in document and "\x00" not in document


def cards(document: str) -> list:
    _, root = parse(document)
    return root.find_all("article", "step")


# ------------------------------------------------------------ one trial
def test_a_job_page_shows_its_header_reason_and_every_step(api, tmp_path, data):
    result, document = view(api, tmp_path, "-j", "G1-J0032")
    assert result.code == 0, result.err
    assert f"wrote {tmp_path / 'page.html'}" in result.err and result.out == ""
    assert_safe(document)
    _, root = parse(document)
    header = root.find_all("section", "trial")[0].all_text()
    job = data.job("G1-J0032")
    facts = payloads.run_facts(job)
    for text in ("G1-J0032", "G1", job["instance_id"], job["template"], "failed", "fail", f"{facts['duration_s']:.2f} s",
                 f"{facts['tokens_sent']:,}", "wrong_patch"):
        assert text in header, text
    assert "Fail reason (the job's report): model (wrong_patch)" in header
    steps = payloads.job_trajectory(job)["trajectory"]
    assert len(cards(document)) == len(steps) == 2 * facts["num_turns"] - 1
    texts = root.all_text()
    assert "FAILED tests/" in texts and "diff --git" in texts  # the failing test's output, the wrong patch


def test_the_page_goes_under_the_output_directory_by_default(api, tmp_path):
    result = api("-o", str(tmp_path / "out"), "view", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert (tmp_path / "out" / "G1-J0001_view.html").is_file()
    result = api("view", "-j", "G1-J0001", "-j", "G1-J0002", "-o", str(tmp_path / "dir"))
    assert result.code == 0 and (tmp_path / "dir" / "G1-J0001_vs_G1-J0002_view.html").is_file()


def test_media_are_fetched_once_and_embedded_as_images(api, tmp_path, sandbox):
    sandbox.app.state.reset_stats()
    result, document = view(api, tmp_path, "-j", "G1-J0010")
    assert result.code == 0, result.err
    _, root = parse(document)
    images = root.find_all("img")
    assert len(images) == 2  # the two PNGs; the video is named, not embedded
    for img in images:
        data = base64.b64decode(img.attrs["src"].split(",", 1)[1])
        assert media.sniff(data) == "image/png"
    assert "clip (video/mp4): not embedded" in root.all_text()
    assert sandbox.app.state.counters["trace_media"] == 2  # once per image, none for the video


def test_a_media_behind_a_login_page_is_named_not_fatal(api, tmp_path):
    result, document = view(api, tmp_path, "-j", "G1-J0025")
    assert result.code == 0, result.err
    assert "sso/G1-J0025.png (image/png): endpoint requires SSO login" in parse(document)[1].all_text()
    assert len(parse(document)[1].find_all("img")) == 2


@pytest.mark.parametrize("job", [f"G1-J{n:04d}" for n in range(1, 41)] + ["JORPHAN", "../JODD x"])
def test_every_sandbox_job_has_a_page(api, tmp_path, job):
    result, document = view(api, tmp_path, "-j", job)
    assert result.code == 0, result.err
    assert_safe(document)


def test_running_cancelled_and_unscored_jobs_have_a_page(api, tmp_path, data):
    jobs = [j for g in ("BASE", "CAND2", "G2", "G3") for j in data.iter_group_jobs(g)
            if j["status"] in ("running", "cancelled")][:12]
    assert {j["status"] for j in jobs} == {"running", "cancelled"}
    for job in jobs:
        result, document = view(api, tmp_path, "-j", job["job_id"])
        assert result.code == 0, result.err
        header = parse(document)[1].find_all("section", "trial")[0].all_text()
        assert job["status"] in header and "not scored" in header


def test_hostile_jobs_render_escaped_and_nothing_is_lost(api, tmp_path, data):
    for job_id, _ in HOSTILE_JOBS:
        if len(job_id) > 200 or not job_id.isprintable():
            continue  # ids a command line cannot pass as they are
        result, document = view(api, tmp_path, "-j", job_id)
        assert result.code == 0, result.err
        assert_safe(document)
        _, root = parse(document)
        text = root.all_text()
        assert len(cards(document)) == 9  # every step, objects or not
        for shown in ("<script>alert(document.cookie)</script>", "<svg onload=alert(2)>", "\\x1b]0;title\\x07",
                      "<b onmouseover=alert(3)>key</b>", "javascript:alert(4)", "a second step 3",
                      "a step that is a string <script>alert(5)</script>", "four\\u202e", "null", "42"):
            assert shown in text, shown
        assert "A" * 120_000 + "<script>alert(7)</script>" in text  # the whole of a long answer, folded
        # only what claims to be PNG, JPEG, GIF or WebP is fetched, and only a real image is embedded
        assert "evil.svg (image/svg+xml): not embedded" in text
        assert "disguised/a.png (image/png): not embedded: 119 bytes that are no image/png, " in text
        assert "javascript:alert(8)" in text and not root.find_all("img") and not root.find_all("a")


def test_another_backend_s_shapes_images_and_gaps(bl, origins, tmp_path):
    """A backend with another trajectory shape (``messages``, string step numbers, content parts),
    a JPEG, an image over the cap, and no job, report or metrics endpoint: the page shows every
    message and field, embeds the JPEG, names the rest."""
    jpeg = b"\xff\xd8\xff\xe0" + b"\x00" * 60
    big = b"\x89PNG\r\n\x1a\n" + b"\x00" * 2_100_000
    messages = [
        {"step": "1", "role": "user", "content": [{"type": "text", "text": "fix the bug"}], "ts": 1.5},
        {"step": "2", "role": "assistant", "function_call": {"name": "run", "arguments": "{\"cmd\": \"ls\"}"},
         "media": [{"trace_media": {"oss_uri": "oss://b/a.jpg", "mime_type": "image/jpeg"}},
                   {"trace_media": {"oss_uri": "oss://b/big.png", "mime_type": "image/png"}}]},
    ]

    def answer(path: str, query: dict[str, str]):
        if path == "/openapi/jobs/X/trajectory":
            return js({"job_id": "X", "messages": messages, "agent": {"name": "other"}})
        if path == "/openapi/getTrajV2/mediaFile":
            return binary(jpeg if query.get("ossUri") == "oss://b/a.jpg" else big, query.get("mime", ""))
        return NOT_FOUND

    origin = origins(answer)
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "view", "-j", "X",
                "-o", str(tmp_path / "x.html"))
    assert result.code == 0, result.err
    document = (tmp_path / "x.html").read_text(encoding="utf-8")
    assert_safe(document)
    _, root = parse(document)
    text = root.all_text()
    assert len(cards(document)) == 2 and "#1" in text and "#2" in text
    for shown in ('"text": "fix the bug"', "ts", "1.5", '"arguments": "{\\"cmd\\": \\"ls\\"}"', "agent",
                  '"name": "other"', "job: API error 404", "report: API error 404", "metrics: API error 404"):
        assert shown in text, shown
    [img] = root.find_all("img")
    assert img.attrs["src"].startswith("data:image/jpeg;base64,")
    assert "big.png (image/png): not embedded: larger than 2,000,000 bytes" in text
    assert "run" in root.find_all("span", "tool")[0].all_text()  # the function called


def test_an_unknown_job_fails_and_writes_nothing(api, tmp_path):
    result, document = view(api, tmp_path, "-j", "NOPE")
    assert result.code == 1 and document == ""
    assert result.failed == ["NOPE"] and "trajectory: API error 404" in result.err


def test_at_most_two_trials_and_groups_need_an_instance(api, tmp_path):
    result = api("view", "-j", "G1-J0001,G1-J0002,G1-J0003")
    assert result.code == 2 and "at most two -j or two -g" in result.err
    result = api("view", "-g", "BASE", "-g", "CAND2")
    assert result.code == 2 and "-g/--group needs --instance INSTANCE" in result.err
    result = api("view", "--instance", "nope__nope-1", "-g", "BASE")
    assert result.code == 1 and "group BASE has no job of instance nope__nope-1" in result.err


def test_a_symlink_is_never_replaced(api, tmp_path):
    target = tmp_path / "target.html"
    target.write_text("precious")
    link = tmp_path / "page.html"
    link.symlink_to(target)
    result = api("view", "-j", "G1-J0001", "-o", str(link))
    assert result.code == 2 and "symbolic link" in result.err  # refused before any request
    assert link.is_symlink() and target.read_text() == "precious"


@pytest.mark.parametrize(("given", "written"), [
    ("fresh/", "fresh/G1-J0001_view.html"),  # a directory: made, the page named after the job
    ("fresh", "fresh/G1-J0001_view.html"),  # a new name without an extension: a directory too
    ("a/b/c/", "a/b/c/G1-J0001_view.html"),  # its parents made, as every command's -o DIR
    ("out.v2/", "out.v2/G1-J0001_view.html"),  # '/' makes a dotted name a directory
    ("page.html", "page.html"),
    ("page.txt", "page.txt"),  # a name with an extension is the file, never a directory
])
def test_o_names_the_page_or_the_directory_it_goes_in(api, tmp_path, given, written):
    result = api("view", "-j", "G1-J0001", "-o", f"{tmp_path}/{given}")
    assert result.code == 0, result.err
    page_file = tmp_path / written
    assert page_file.is_file() and page_file.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert f"wrote {tmp_path}/{written}" in result.err
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [written]


def test_o_an_existing_file_or_directory_is_what_it_is(api, tmp_path):
    (tmp_path / "x.html").mkdir()
    (tmp_path / "noext").write_text("old")
    assert api("view", "-j", "G1-J0001", "-o", str(tmp_path / "x.html")).code == 0
    assert (tmp_path / "x.html" / "G1-J0001_view.html").is_file()
    assert api("view", "-j", "G1-J0001", "-o", str(tmp_path / "noext")).code == 0
    assert (tmp_path / "noext").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(("given", "message"), [
    ("afile/", "it is a file, not a directory"),
    ("afile/sub/", "a component of the path is a file, not a directory"),
    ("missing/page.html", "the directory {tmp}/missing does not exist"),
])
def test_o_that_cannot_be_written_stops_before_any_request(api, sandbox, tmp_path, given, message):
    (tmp_path / "afile").write_text("precious")
    sandbox.reset_stats()
    result = api("view", "-j", "G1-J0001", "-o", f"{tmp_path}/{given}")
    assert result.code == 2, result.err
    assert f"cannot write --output-dir {tmp_path}/{given}: {message.format(tmp=tmp_path)}" in result.err
    assert sandbox.stats["requests"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "precious"


def test_dash_prints_the_page(api):
    result = api("view", "-j", "G1-J0001", "-o", "-")
    assert result.code == 0 and result.out.startswith("<!DOCTYPE html>") and "wrote" not in result.err


def test_open_opens_the_written_page(api, tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda uri: opened.append(uri) or True)
    result = api("view", "-j", "G1-J0001", "-o", str(tmp_path / "p.html"), "--open")
    assert result.code == 0
    assert opened == [(tmp_path / "p.html").as_uri()]
    monkeypatch.setattr("webbrowser.open", lambda uri: False)
    result = api("view", "-j", "G1-J0001", "-o", str(tmp_path / "p.html"), "--open")
    assert result.code == 0 and "no browser could be opened here" in result.err


# ------------------------------------------------------------ two trials
def test_two_trials_side_by_side_with_their_first_difference(api, tmp_path):
    result, document = view(api, tmp_path, "--instance", CHANGED, "-g", "BASE", "-g", "CAND2")
    assert result.code == 0, result.err
    assert_safe(document)
    _, root = parse(document)
    headers = [s.all_text() for s in root.find_all("section", "trial")]
    assert "BASE" in headers[0] and "fail" in headers[0] and "CAND2" in headers[1] and "pass" in headers[1]
    assert "Trials of the instance in BASE (4" in headers[0]
    [note] = root.find_all("p", "firstdiff")
    [link] = note.find_all("a")
    assert link.attrs["href"] == "#step-8"
    [marked] = [r for r in root.find_all("div", "row") if "diff" in r.classes()]
    assert marked.attrs["id"] == "step-8"
    assert "str_replace" in note.all_text()  # the passing trial edits the file; the failing one runs the test again
    rows = root.find_all("div", "row")
    assert [r.attrs["id"] for r in rows] == [f"step-{k}" for k in range(len(rows))]


def test_the_first_difference_of_two_jobs_also_prints(api):
    result = api("view", "--instance", CHANGED, "-g", "BASE", "-g", "CAND2", "--output", "json")
    assert result.code == 0, result.err
    base, cand = json.loads(result.out)
    assert base["group_id"] == "BASE" and base["pass"] is False and cand["pass"] is True
    assert [s["step"] for s in base["steps"] if s["first_difference"]] == [8]
    again = api("view", "-j", base["job_id"], "-j", cand["job_id"], "--output", "text")
    # What differs comes first, with both values (the tool, then the command): test_first_difference_note.
    assert again.code == 0 and again.out.startswith("First difference at step 8: tool: bash -> editor; ")
    assert "#8 assistant [bash] (" in again.out and "<== first difference" in again.out


def test_changed_instances_of_base_and_cand2_part_at_a_step(data):
    """A failing BASE trial and a passing CAND2 trial of one instance (each of at least 8 turns,
    each with a trajectory) agree on their first steps - the instance's: grep, read, run the
    failing test - and part after them, at a step of their own."""
    rows = {}
    for gid in ("BASE", "CAND2"):
        for job in data.iter_group_jobs(gid):
            rows.setdefault((gid, job["instance_id"]), []).append(job)
    found = []
    for (gid, instance), jobs in rows.items():
        if gid != "BASE" or ("CAND2", instance) not in rows:
            continue
        failing = next((j for j in jobs if j["status"] == "failed" and j["n"] % 13 and j["num_turns"] >= 8), None)
        passing = next((j for j in rows[("CAND2", instance)]
                        if j["status"] == "succeeded" and j["n"] % 13 and j["num_turns"] >= 8), None)
        if failing is None or passing is None:
            continue
        pair = [read(payloads.job_trajectory(j)) for j in (failing, passing)]
        found.append(first_difference(align(*pair)))
    assert len(found) >= 10 and all(k is not None and k >= 6 for k in found), found
    assert len(set(found)) > 3  # not one fixed step for every instance


# ------------------------------------------------------------ the listing
def test_text_lists_the_steps_for_a_terminal(api, tmp_path, data):
    result = api("-o", str(tmp_path), "view", "-j", "G1-J0032", "--output", "text")
    assert result.code == 0 and not list(tmp_path.iterdir())  # no page written
    lines = result.out.splitlines()
    assert lines[0].startswith("job G1-J0032  group G1  instance ")
    assert "fail reason: model (wrong_patch)" in result.out
    steps = payloads.job_trajectory(data.job("G1-J0032"))["trajectory"]
    assert sum(1 for line in lines if re.match(r"#\d+ ", line)) == len(steps)
    assert "    + tool_calls: [{" in result.out and "... (" in result.out


def test_text_escapes_what_a_terminal_would_run(api):
    result = api("view", "-j", "../../../escape-job", "--output", "text")
    assert result.code == 0, result.err
    assert "\x1b" not in result.out and "\u202e" not in result.out and "\x07" not in result.out
    assert "\\x1b]0;title\\x07" in result.out


@pytest.mark.parametrize("output", ["table", "csv", "jsonl", "markdown", "yaml"])
def test_the_other_formats_print_one_row_per_step(api, output, data):
    result = api("view", "-j", "G1-J0001", "--output", output)
    assert result.code == 0, result.err
    steps = payloads.job_trajectory(data.job("G1-J0001"))["trajectory"]
    if output in ("table", "csv", "markdown"):
        assert sum(1 for line in result.out.splitlines() if "G1-J0001" in line) == len(steps)
    assert "Turn 1: look at" in result.out


def test_query_reshapes_the_printed_trials(api):
    result = api("view", "-j", "G1-J0032", "--output", "json", "--query", "[0].{reason: fail_reason, n: length(steps)}")
    assert result.code == 0 and json.loads(result.out) == {"reason": "model", "n": 59}
    bad = api("view", "-j", "G1-J0032", "--query", "[")
    assert bad.code == 2 and "--query" in bad.err


# ------------------------------------------------------------ trajectory steps, Python, rsi
def test_trajectory_steps_rows(api, data):
    result = api("trajectory", "steps", "-j", "G1-J0010")
    assert result.code == 0
    [element] = json.loads(result.out)
    steps = payloads.job_trajectory(data.job("G1-J0010"))["trajectory"]
    assert element["job_id"] == "G1-J0010" and element["total"] == len(steps) == len(element["steps"])
    first = element["steps"][0]
    assert first["role"] == "assistant" and first["tool"] == "bash" and "messages" in first["fields"]
    assert all(len(s["text"]) <= 160 for s in element["steps"])


def test_the_python_client_returns_the_page_path(sandbox, tmp_path):
    from benchloop import Client, PartialFailure

    with Client(host=sandbox.url, api_key=API_KEY, output_dir=tmp_path, retry=0) as bl:
        path = bl.view(job="G1-J0010")
        assert path == str(tmp_path / "G1-J0010_view.html") and Path(path).is_file()
        assert bl.view(job=["G1-J0001", "G1-J0002"], output_dir=tmp_path / "x.html") == str(tmp_path / "x.html")
        with pytest.raises(PartialFailure) as caught:
            bl.view(job="NOPE")
        assert caught.value.failures[0][0] == "NOPE"


def test_rsi_download_says_how_many_jobs_have_none_yet(api, tmp_path):
    result = api("rsi", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 0
    written = len(list((tmp_path / "G1").glob("*_rsi.md")))
    assert written == 14
    assert f"{40 - written} of 40 job(s) have no RSI yet (not created, or still being created)" in result.err


# ------------------------------------------------------------ compare --report-dir
def test_compare_report_dir_links_a_page_per_changed_instance(api, tmp_path):
    folder = tmp_path / "report"
    result = api("compare", "-g", "BASE", "-g", "CAND2", "--report-dir", str(folder))
    assert result.code == 0, result.err
    [comparison] = json.loads(result.out)
    _, root = parse((folder / "index.html").read_text(encoding="utf-8"))
    links = {a.all_text(): a.attrs["href"] for a in root.find_all("a")}
    assert set(links) == {e["instance"] for e in comparison["instances"]}
    for instance, href in links.items():
        assert href == f"instances/CAND2/{instance}.html"
        page_text = (folder / href).read_text(encoding="utf-8")
        assert_safe(page_text)
        assert len(parse(page_text)[1].find_all("section", "trial")) == 2
    assert all(not h.startswith(("/", "http", "file:")) for h in links.values())  # relative: zips and mails


def test_report_dir_holds_exactly_the_pages_its_index_links(api, tmp_path):
    """--changes picks the instances the index lists: their pages and no other are written; a
    second run into the same folder removes the pages of the first that it does not link, and
    nothing else (the user's files, a page-named file that is no bl view page, a symlink)."""
    from urllib.parse import unquote

    folder = tmp_path / "report"

    def linked() -> set[str]:
        _, root = parse((folder / "index.html").read_text(encoding="utf-8"))
        return {unquote(a.attrs["href"]) for a in root.find_all("a")}

    def pages() -> set[str]:
        return {p.relative_to(folder).as_posix() for p in (folder / "instances").rglob("*.html")}

    first = api("compare", "-g", "BASE", "-g", "CAND2", "--changes", "regressed", "--report-dir", str(folder))
    assert first.code == 0, first.err
    [comparison] = json.loads(first.out)
    regressed = {f"instances/CAND2/{e['instance']}.html" for e in comparison["instances"] if e["difference"] < 0}
    assert 0 < len(regressed) < len(comparison["instances"])
    assert linked() == pages() == regressed
    assert f"--report-dir: {len(regressed)} side-by-side page(s)" in first.err

    mine = {"notes.txt": "mine", "instances/README": "mine", "instances/CAND2/notes.html": "<p>mine</p>",
            "instances/CAND2/notes.txt": "mine", "instances/OTHER/.keep": ""}
    for name, text in mine.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    outside = tmp_path / "outside.html"
    outside.write_bytes((folder / sorted(regressed)[0]).read_bytes())  # a bl view page, linked to
    (folder / "instances" / "CAND2" / "link.html").symlink_to(outside)

    second = api("compare", "-g", "BASE", "-g", "CAND2", "--template", "swe-bench-full", "--report-dir", str(folder))
    assert second.code == 0, second.err
    now = linked()
    assert now and now != regressed
    assert pages() == now | {"instances/CAND2/notes.html", "instances/CAND2/link.html"}
    stale = regressed - now
    assert stale and f"--report-dir: removed {len(stale)} page(s) of an earlier run" in second.err
    for name, text in mine.items():
        assert (folder / name).read_text() == text, name
    assert (folder / "instances" / "CAND2" / "link.html").is_symlink() and outside.is_file()


# ------------------------------------------------------------ the viewer itself
def test_steps_are_read_whatever_the_answer_shape():
    assert [s.key for s in read({"steps": [{"step": 4}, {"step": "5"}]}).steps] == [4, 5]
    assert [s.key for s in read([{"role": "a"}, "x"]).steps] == [0, 1]
    both = read({"job_id": "J", "trajectory": [{}], "steps": [{}, {}], "extra": 1}, "J")
    assert len(both.steps) == 1 and both.fields == {"steps": [{}, {}], "extra": 1}
    assert read("text").fields == {"answer": "text"} and read(None).fields == {}
    other = read({"job_id": "OTHER", "trajectory": []}, "J")
    assert other.fields == {"job_id": "OTHER"}  # an answer that names another job says so
    chat = read({"messages": [{"role": "user", "content": "hi"}], "model": "m"})
    assert [s.role for s in chat.steps] == ["user"] and chat.fields == {"model": "m"}
    nested = read({"trajectory": {"steps": [{"step": 1}], "meta": 2}})
    assert [s.key for s in nested.steps] == [1] and nested.fields == {"trajectory": {"meta": 2}}
    assert read({"trajectory": {"no": "steps"}}).fields == {"trajectory": {"no": "steps"}}


def test_the_first_difference_is_another_tool_or_another_action():
    def steps(*calls):
        return read([{"step": i, "role": "assistant", "tool_calls": [{"id": f"r{i}-{len(calls)}", "name": n,
                                                                       "arguments": a}]}
                     for i, (n, a) in enumerate(calls)])
    same = steps(("bash", {"c": 1}), ("bash", {"c": 2}))
    assert first_difference(align(same, steps(("bash", {"c": 1}), ("bash", {"c": 2})))) is None
    assert first_difference(align(same, steps(("bash", {"c": 1}), ("editor", {"c": 2})))) == 1
    assert first_difference(align(same, steps(("bash", {"c": 1}), ("bash", {"c": 3})))) == 1
    assert first_difference(align(same, steps(("bash", {"c": 1})))) == 1  # one trial stops
    outputs = read([{"step": 0, "role": "tool", "tool": "bash", "content": "x"}])
    assert first_difference(align(outputs, read([{"step": 0, "role": "tool", "tool": "bash", "content": "y"}]))) is None


def test_the_representative_trial_is_the_most_common_outcome_failing_on_a_tie():
    def t(*passes):
        return [{"job_id": f"J{i}", "pass": p} for i, p in enumerate(passes)]
    assert trials.representative(t(True, False, True))["job_id"] == "J0"
    assert trials.representative(t(True, False))["job_id"] == "J1"
    assert trials.representative(t(None, False, True, True))["job_id"] == "J2"
    assert trials.representative(t(None, None))["job_id"] == "J0"


def test_only_real_images_are_embedded():
    png = payloads.media_bytes("oss://x/a.png", "image/png")
    assert media.embedded(png)["type"] == "image/png"
    for data in (b"<svg onload=alert(1)>", b"<html>", b"\x00\x00\x00\x18ftypmp42", b""):
        assert "problem" in media.embedded(data)
    assert media.sniff(b"\xff\xd8\xff\xe0") == "image/jpeg" and media.sniff(b"GIF89a") == "image/gif"
    assert media.sniff(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    assert media.data_uri({"type": "image/svg+xml", "data": "AAAA"}) is None
    assert media.data_uri({"type": "image/png", "data": "AA\"onerror=x"}) is None


def test_a_long_content_shows_its_beginning_and_folds_the_whole():
    text = "\n".join(f"line {i}" for i in range(500))
    document = "".join(page.render([{"job_id": "J", "trajectory": [{"role": "tool", "content": text}]}]))
    _, root = parse(document)
    [details] = root.find_all("details", "full")[-1:]
    assert details.find_all("pre")[0].all_text() == text
    assert "(showing" in root.all_text() and "500 lines" in root.all_text()


def test_the_page_is_written_piece_by_piece():
    steps = [{"step": i, "role": "tool", "content": "x" * 5000} for i in range(200)]
    pieces = list(page.render([{"job_id": "J", "trajectory": steps}]))
    assert len(pieces) > 200 and max(len(p) for p in pieces) < 20_000


def test_the_key_is_masked_in_the_page_and_the_listing():
    trial = {"job_id": "J", "trajectory": [{"role": "tool", "content": f"token {API_KEY} here", API_KEY: 1}]}
    assert API_KEY not in "".join(page.render([trial], (API_KEY,)))
    assert API_KEY not in listing.text([trial], (API_KEY,))


# Text a page shows as it came (no control or hiding character: those are shown as escapes).
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=40)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=8)
STEP = st.dictionaries(TEXT, JSON, max_size=6) | JSON


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, max_size=8), st.lists(STEP, max_size=8), st.dictionaries(TEXT, JSON, max_size=2))
def test_no_step_or_field_is_lost(left, right, extra):
    """Every step is a card, and every field's name and value (text as text, anything else as
    JSON) is in the page's text, for one trial and for two side by side."""
    answers = [{"job_id": "A", "trajectory": left, **{f"x{k}": v for k, v in extra.items()}},
               {"job_id": "B", "steps": right}]
    for shown in ([answers[0]], answers):
        document = "".join(page.render([{"job_id": a["job_id"], "trajectory": a} for a in shown]))
        assert_safe(document)
        _, root = parse(document)
        text = root.all_text()
        assert len(root.find_all("article", "step")) == sum(len(a.get("trajectory", a.get("steps"))) for a in shown)
        for answer in shown:
            for step in answer.get("trajectory", answer.get("steps")):
                _assert_shown(step, text)
            for key, value in answer.items():
                if key not in ("job_id", "trajectory", "steps"):
                    assert key in text and _shown(value) in text


def _shown(value) -> str:
    raw = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return raw.replace("\r\n", "\n")


def _assert_shown(step, text: str) -> None:
    if not isinstance(step, dict):
        assert _shown(json.dumps(step, indent=2, ensure_ascii=False)) in text
        return
    for key, value in step.items():
        if key == "step" and (isinstance(value, int) and not isinstance(value, bool)):
            assert f"#{value}" in text
            continue
        if key not in ("role", "tool", "content", "tokens", "step"):
            assert key in text, key
        if key == "tokens" and isinstance(value, int) and not isinstance(value, bool):
            assert f"{value:,} tokens" in text
            continue
        assert _shown(value) in text, (key, value)


def test_a_block_keeps_lines_and_shows_hiding_characters():
    from benchloop.base.templating import environment

    def block(text: str) -> str:
        return environment("viewer").from_string("{{ v|block }}").render(v=text)

    assert block("a\r\nb\tc") == "a\nb\tc"
    assert block("x\x1by\u202e<") == "x\\x1by\\u202e&lt;"


# ------------------------------------------------------------ the sandbox's story
@pytest.mark.parametrize("group", ["G1", "G2", "BASE", "CAND", "CAND2"])
def test_trajectories_agree_with_their_reports(data, group):
    """As many turns as the metrics and the report say, and the same end: the last step's
    ``finish`` is the report's fail reason (or the submission of a passing run)."""
    ends, wrong = set(), 0
    for job in data.iter_group_jobs(group):
        steps = payloads.job_trajectory(job)["trajectory"]
        report = payloads.job_report(job)["reports"]
        turns = payloads.run_facts(job)["num_turns"]
        if job["n"] % 13 == 0:
            assert steps == [] and (not report or "No trajectory was recorded" in report[0]["content"])
            continue
        assert sum(1 for s in steps if s["role"] == "assistant") == turns, job["job_id"]
        assert sum(1 for s in steps if s["role"] == "tool") == payloads.run_facts(job)["tool_call_count"]
        if report:
            assert f"The agent ran {turns} turns" in report[0]["content"]
        last = steps[-1]
        if job["status"] == "running":
            assert "finish" not in last and last["tool_calls"]  # still waiting for its tool
            continue
        reason, sub = payloads.fail_reason(job)
        expected = {"cancelled": "cancelled", "succeeded": "submitted"}.get(job["status"], reason)
        assert last["finish"]["reason"] == expected, job["job_id"]
        if reason:
            assert last["finish"]["detail"] == sub
            assert report == [] or report[0]["fail_reason"] == reason
        ends.add(expected)
        if reason == "model" and sub == "wrong_patch":  # the wrong diff; with time, the failing test's output
            assert last["patch"].startswith("diff --git")
            wrong += 1
            if turns >= 6:
                assert any("FAILED tests/" in (s.get("content") or "") for s in steps if s["role"] == "tool")
    assert {"submitted", "model", "timeout"} <= ends and wrong > 0


def test_printed_trials_match_their_declared_output(api):
    import jsonschema

    from benchloop.table.load import load_model

    output = load_model().resources["view"].actions["view"].dimensions["group"].output
    validator = jsonschema.Draft202012Validator(output.resolved)
    result = api("view", "--instance", CHANGED, "-g", "BASE", "-g", "CAND2", "--output", "json")
    for element in json.loads(result.out):
        assert not list(validator.iter_errors(element))
    result = api("view", "-j", "../../../escape-job", "--output", "json")
    [element] = json.loads(result.out)
    assert not list(validator.iter_errors(element))


def test_the_mcp_tool_trajectory_steps_fits_its_budget(sandbox):
    from benchloop.mcp_server.serve import build_runner

    values = {"http": None, "tools": None, "toolsets": "trajectories", "allow_writes": False, "allow_downloads": None,
              "max_chars": 4000}
    runner = build_runner(values, {"host": sandbox.url, "api_key": sandbox.api_key, "retry": 0})
    try:
        assert "view" not in runner.every  # a page for people is no tool
        tool = runner.tools["trajectory_steps"]
        assert tool.read_only
        reply = runner.call("trajectory_steps", {"job": ["G1-J0032"]})
        again = runner.call("trajectory_steps", {"job": ["G1-J0032"], "query": "[0].steps[?first_difference == null] | [8]"})
    finally:
        runner.close()
    assert not reply.is_error and sum(len(t) for t in reply.texts) <= 4000
    assert reply.structured["truncated"] and reply.structured["result"][0]["job_id"] == "G1-J0032"
    assert json.loads(again.texts[0])["step"] == 8


HOSTILE_NAMES = ["<script>alert(1)</script>", '" onmouseover="alert(2)', "../../etc/passwd", "a%2Fb c",
                 "javascript:alert(3)", "\x1b[31mred\u202e"]


def test_report_dir_with_hostile_instances_links_safely(bl, origins, tmp_path):
    """Instance names that are markup, paths, percent signs or controls: each page lands inside
    DIR under a safe name, and its link (relative, percent-encoded, escaped) opens that file."""
    jobs = {g: [(f"{g}-{k}", HOSTILE_NAMES[k % len(HOSTILE_NAMES)], float(g == "CAND")) for k in range(12)]
            for g in ("BASE", "CAND")}

    def answer(path: str, query: dict[str, str]):
        group = jobs.get(query.get("group_id", ""))
        if path == "/openapi/jobs" and group is not None:
            return js({"total": len(group), "jobs": [{"job_id": j, "group_id": query["group_id"], "status": "succeeded",
                                                      "instance_id": i, "created_at": "2026-07-01"} for j, i, _ in
                                                     group[int(query.get("skip", 0)):][:int(query.get("limit", 50))]]})
        if path == "/openapi/metrics" and group is not None:
            return js({"total": len(group), "metrics": [{"job_id": j, "metrics": [{"type": "eval",
                                                                                  "data": {"task_score": s}}]}
                                                        for j, _, s in group[int(query.get("skip", 0)):]]})
        if path.endswith("/trajectory"):
            job = path.split("/")[3]
            return js({"job_id": job, "trajectory": [{"step": 0, "role": "tool", "tool": job[:4], "content": job}]})
        return NOT_FOUND

    origin = origins(answer)
    folder = tmp_path / "report"
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "compare", "-g", "BASE", "-g", "CAND",
                "--report-dir", str(folder))
    assert result.code == 0, result.err
    index = (folder / "index.html").read_text(encoding="utf-8")
    _, root = parse(index)
    assert not root.find_all("script") and "\x1b" not in index and "\u202e" not in index
    links = root.find_all("a")
    assert len(links) == len(HOSTILE_NAMES)
    written = {p.relative_to(folder).as_posix() for p in folder.rglob("*.html")}
    assert len(written) == len(HOSTILE_NAMES) + 1 and all(p.startswith("instances/CAND/") or p == "index.html"
                                                          for p in written)
    from urllib.parse import unquote

    for link in links:
        href = link.attrs["href"]
        assert re.fullmatch(r"instances/CAND/[A-Za-z0-9%._~-]+\.html", href), href  # no scheme, no markup
        assert unquote(href) in written  # what a browser opens is the page written
        assert_safe((folder / unquote(href)).read_text(encoding="utf-8"))
