"""``bl compare`` and ``bl jobs table`` against the sandbox's comparison groups.

The figures are checked against an independent computation (numpy, scipy)
from what the backend serves when asked directly, page by page - the
definitions of issue 23 applied to the raw job lists and detail metrics, not
through ``benchloop.compare``.  The fetching is checked by the requests the
sandbox counted: whole pages of the job list and of the detail metrics,
never one request per job.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from compare_references import cr2_bm, difference_figures, mde_factor
from scipy import stats as sp

from benchloop import Client

JOBS = 160
COSTS = ("duration_s", "tokens_sent", "api_call_count", "tool_error_count")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=JOBS)


def ok_json(result):
    assert result.code == 0, result.err
    return json.loads(result.out)


def every_page(backend, path: str, key: str, **params) -> list[dict]:
    items, skip = [], 0
    while True:
        body = backend(path, skip=skip, limit=1000, **params)
        items += body[key]
        skip += len(body[key])
        if not body[key] or skip >= body["total"]:
            return items


# ------------------------------------------------------- independent figures
def raw_group(backend, gid: str, threshold: float = 0.5) -> dict[str, dict]:
    """instance -> {"jobs": [...], "scores": [...], "passes": [...], costs...} from the raw payloads."""
    jobs = every_page(backend, "/openapi/jobs", "jobs", group_id=gid)
    metrics = {m["job_id"]: m for m in every_page(backend, "/openapi/metrics", "metrics", group_id=gid)}
    out: dict[str, dict] = {}
    for job in jobs:
        inst = out.setdefault(job["instance_id"], {"jobs": [], "scores": [], "passes": [],
                                                   **{c: [] for c in COSTS}})
        inst["jobs"].append(job["job_id"])
        element = metrics.get(job["job_id"]) or {}
        evals = [m["data"]["task_score"] for m in element.get("metrics") or [] if m.get("type") == "eval"]
        if not evals:
            continue
        score = float(evals[0])
        inst["scores"].append(score)
        inst["passes"].append(1.0 if score >= threshold else 0.0)
        run = element["run_metrics"][0] if isinstance(element["run_metrics"], list) else element["run_metrics"]
        for cost in COSTS:
            if run.get(cost) is not None:
                inst[cost].append(float(run[cost]))
    return {k: v for k, v in out.items()}


def ci(values, clusters=None) -> tuple[float, float, float, float, float]:
    """(mean, se, low, high, df) of a group's figure: Student's t with n - 1 df, or CR2 with
    Bell-McCaffrey's df (compare_references.cr2_bm, the general matrix formulas)."""
    values = np.asarray(values, dtype=float)
    m = values.mean()
    if clusters is None:
        se, df = values.std(ddof=1) / math.sqrt(len(values)), len(values) - 1
    else:
        se, df = cr2_bm(values, clusters)
    half = sp.t.ppf(0.975, df) * se
    return m, se, m - half, m + half, df


def close(a, b) -> bool:
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


def repo(instance: str) -> str:
    return instance.split("__")[0]


def check_against_raw(result: dict, base: dict, cand: dict, clustered: bool = False) -> None:
    scored_b = {k: v for k, v in base.items() if v["scores"]}
    scored_c = {k: v for k, v in cand.items() if v["scores"]}
    paired = sorted(set(scored_b) & set(scored_c))

    def clusters(keys):
        return [repo(k) for k in keys] if clustered else None

    for g, raw in zip(result["groups"], (base, cand), strict=True):
        scored = {k: v for k, v in raw.items() if v["scores"]}
        keys = list(scored)
        assert g["jobs"] == sum(len(v["jobs"]) for v in raw.values())
        assert g["jobs_scored"] == sum(len(v["scores"]) for v in raw.values())
        assert g["instances"] == len(scored)
        assert g["clusters"] == (len(set(clusters(keys))) if clustered else len(keys))
        m, _, lo, hi, _ = ci([np.mean(scored[k]["passes"]) for k in keys], clusters(keys))
        assert close(g["pass_rate"], m) and close(g["pass_rate_ci95"][0], lo) and close(g["pass_rate_ci95"][1], hi)
        m, _, lo, hi, _ = ci([np.mean(scored[k]["scores"]) for k in keys], clusters(keys))
        assert close(g["mean"], m) and close(g["mean_ci95"][0], lo) and close(g["mean_ci95"][1], hi)
        assert close(g["paired_pass_rate"], np.mean([np.mean(scored[k]["passes"]) for k in paired]))
        assert close(g["paired_mean"], np.mean([np.mean(scored[k]["scores"]) for k in paired]))
    p = result["paired"]
    assert p["instances"] == len(paired)
    d = np.array([np.mean(scored_c[k]["passes"]) - np.mean(scored_b[k]["passes"]) for k in paired])
    _, _, _, _, df = ci(d, clusters(paired))
    m, se, lo, hi, p_value = difference_figures(d, clusters(paired))
    assert p["clusters"] == (len(set(clusters(paired))) if clustered else len(paired)) and close(p["df"], df)
    assert close(p["pass_rate_difference"], m) and close(p["se"], se)
    assert p["mde"] == pytest.approx(mde_factor(df) * se, rel=1e-8)
    assert close(p["ci95"][0], lo) and close(p["ci95"][1], hi)
    assert close(p["p_value"], p_value)
    up, down = int((d > 0).sum()), int((d < 0).sum())
    assert (p["improved"], p["regressed"], p["unchanged"]) == (up, down, int((d == 0).sum()))
    if clustered:  # the sign test counts clusters (by the sign of their mean change)
        names = clusters(paired)
        sums = [d[[i for i, k in enumerate(names) if k == c]].sum() for c in sorted(set(names))]
        up, down = sum(1 for x in sums if x > 1e-12), sum(1 for x in sums if x < -1e-12)
    assert close(p["sign_test_p"], sp.binomtest(up, up + down, 0.5).pvalue)
    dm = np.array([np.mean(scored_c[k]["scores"]) - np.mean(scored_b[k]["scores"]) for k in paired])
    m, se, lo, hi, p_value = difference_figures(dm, clusters(paired))
    assert close(p["mean_difference"], m) and close(p["mean_difference_se"], se)
    assert close(p["mean_difference_ci95"][0], lo) and close(p["mean_difference_ci95"][1], hi)
    assert close(p["mean_difference_p_value"], p_value)
    for cost in COSTS:
        both = [k for k in paired if scored_b[k][cost] and scored_c[k][cost]]
        diff = np.array([np.mean(scored_c[k][cost]) - np.mean(scored_b[k][cost]) for k in both])
        m, se, lo, hi, p_value = difference_figures(diff, clusters(both))
        c = result["costs"][cost]
        assert close(c["difference"], m) and close(c["ci95"][0], lo) and close(c["ci95"][1], hi)
        assert close(c["p_value"], p_value)
        assert close(c["baseline_mean"], np.mean([np.mean(scored_b[k][cost]) for k in both]))
    changed = {k: float(x) for k, x in zip(paired, d, strict=True) if x != 0}
    assert {e["instance"]: e["difference"] for e in result["instances"]} == pytest.approx(changed)
    # strongest evidence first: Fisher's exact p on the trial counts, then the largest change
    for e in result["instances"]:
        b, c = ([int(x) for x in raw[e["instance"]]["passes"]] for raw in (base, cand))
        assert close(e["p_value"], sp.fisher_exact([[sum(b), len(b) - sum(b)], [sum(c), len(c) - sum(c)]]).pvalue)
    ranks = [(e["p_value"], -abs(e["difference"])) for e in result["instances"]]
    assert ranks == sorted(ranks)
    for entry in result["instances"]:
        assert entry["baseline"]["jobs"] == base[entry["instance"]]["jobs"]
        assert entry["candidate"]["jobs"] == cand[entry["instance"]]["jobs"]
    assert result["only_baseline"] == sorted(set(scored_b) - set(scored_c))
    assert result["only_candidate"] == sorted(set(scored_c) - set(scored_b))


def holm(values: list[float]) -> list[float]:
    order = np.argsort(values, kind="stable")
    steps = np.minimum(1.0, np.maximum.accumulate(np.array(values)[order] * (len(values) - np.arange(len(values)))))
    out = np.empty(len(values))
    out[order] = steps
    return list(out)


@pytest.mark.parametrize("cluster", [None, "^(.+?)__"])
def test_compare_follows_the_definitions(api, backend, cluster):
    extra = ["--cluster", cluster] if cluster else []
    results = ok_json(api("compare", "-g", "BASE", "-g", "CAND", "-g", "CAND2", *extra))
    assert [(r["baseline"], r["candidate"]) for r in results] == [("BASE", "CAND"), ("BASE", "CAND2")]
    base = raw_group(backend, "BASE")
    for result in results:
        assert result["metric"] == "metrics[?type=='eval'].data.task_score | [0]"
        assert (result["pass_threshold"], result["unit"], result["cluster"]) == (0.5, "instance_id", cluster)
        check_against_raw(result, base, raw_group(backend, result["candidate"]), clustered=cluster is not None)
    # Holm over the two candidates, per figure; the verdict follows the pass rate's
    for p_key, adjusted_key in (("p_value", "p_value_adjusted"),
                                ("mean_difference_p_value", "mean_difference_p_value_adjusted")):
        expected = holm([r["paired"][p_key] for r in results])
        assert [r["paired"][adjusted_key] for r in results] == pytest.approx(expected, rel=1e-12)
    for cost in COSTS:
        expected = holm([r["costs"][cost]["p_value"] for r in results])
        assert [r["costs"][cost]["p_value_adjusted"] for r in results] == pytest.approx(expected, rel=1e-12)
    for r in results:
        p = r["paired"]
        assert p["verdict"] == ("inconclusive" if p["p_value_adjusted"] >= 0.05 else
                                "better" if p["pass_rate_difference"] > 0 else "worse")
    # the sandbox's design: CAND is within the noise, CAND2 fixes many more instances than it breaks
    assert [r["paired"]["verdict"] for r in results] == ["inconclusive", "better"]
    assert results[1]["summary"].startswith("CAND2 is better than BASE: +")


def test_clustering_makes_the_repo_pairs_difference_disappear(api):
    [plain] = ok_json(api("compare", "-g", "REPO-BASE,REPO-CAND"))
    [clustered] = ok_json(api("compare", "-g", "REPO-BASE,REPO-CAND", "--cluster", "^(.+?)__"))
    assert plain["paired"]["verdict"] == "better" and clustered["paired"]["verdict"] == "inconclusive"
    assert (plain["paired"]["clusters"], clustered["paired"]["clusters"]) == (40, 8)
    assert "over 40 instances in 8 clusters" not in clustered["summary"]  # inconclusive: says what it could see
    assert "with 40 instances in 8 clusters" in clustered["summary"]
    assert [c["cluster"] for c in clustered["cluster_differences"]] == [
        "astropy", "django", "matplotlib", "pytest", "requests", "scikit-learn", "sphinx", "sympy"]


def test_pass_threshold_option(api, backend):
    [result] = ok_json(api("compare", "-g", "BASE,CAND", "--pass-threshold", "0.8"))
    assert result["pass_threshold"] == 0.8
    check_against_raw(result, raw_group(backend, "BASE", 0.8), raw_group(backend, "CAND", 0.8))


def test_requests_are_pages_not_jobs(api, sandbox):
    sandbox.reset_stats()
    ok_json(api("compare", "-g", "BASE", "-g", "CAND"))
    stats = sandbox.stats
    # 160 jobs per group: one page of the job list and one of the detail metrics each
    assert stats.get("job_list") == 2 and stats.get("group_metrics_detail") == 2
    assert not stats.get("job_metrics") and not stats.get("job")


def test_large_groups_take_a_few_pages(make_sandbox, bl, module_env):
    big = make_sandbox(seed=7, groups=0, compare_jobs=2001)
    result = bl("--host", big.url, "--api-key", big.api_key, "--retry", "0", "compare", "-g", "BASE,CAND",
                "--query", "[0].groups[].jobs")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [2001, 2001]
    stats = big.stats
    # pages of 1000: 3 of each list per group, 12 requests for 4,002 jobs
    assert stats.get("job_list") == 6 and stats.get("group_metrics_detail") == 6
    assert not stats.get("job_metrics")


def test_status_filter_and_unit(api, backend):
    result = api("compare", "-g", "BASE,CAND", "--status", "succeeded")
    [element] = ok_json(result)
    succeeded = backend("/openapi/jobs", group_id="BASE", status="succeeded", limit=1)["total"]
    assert element["groups"][0]["jobs"] == element["groups"][0]["jobs_scored"] == succeeded
    assert element["groups"][0]["pass_rate"] == 1.0
    # filtering on an outcome biases every rate, and every job then passes: both are said
    for warning in ("--status succeeded keeps only jobs with that outcome: every pass rate is biased",
                    "at --pass-threshold 0.5, every scored job of BASE and CAND passes"):
        assert any(w.startswith(warning) for w in element["warnings"])
        assert f"[warn] {warning}" in result.err
    [by_template] = ok_json(api("compare", "-g", "BASE,CAND", "--unit", "template"))
    assert by_template["unit"] == "template" and by_template["paired"]["instances"] == 3


def test_unscored_jobs_are_counted_in_a_warning(api, backend):
    result = api("compare", "-g", "BASE,CAND")
    [element] = ok_json(result)
    jobs = every_page(backend, "/openapi/jobs", "jobs", group_id="BASE")
    running = sum(j["status"] == "running" for j in jobs)
    cancelled = sum(j["status"] == "cancelled" for j in jobs)
    assert running and cancelled
    [line] = [w for w in element["warnings"] if w.startswith("BASE:")]
    assert line.startswith(f"BASE: {running + cancelled} of {len(jobs)} jobs have no score (")
    assert f"{running} running" in line and f"{cancelled} cancelled" in line
    assert f"[warn] {line}" in result.err
    # 5% of the instances in one group only: no warning about different instance sets
    assert not any("scored different instances" in w for w in element["warnings"])


@pytest.mark.parametrize(("args", "lines"), [
    (["--metric", "metrics[?type=='nope'].data.x | [0]"],
     ["[error] --metric metrics[?type=='nope'].data.x | [0] gives no score for any job of group BASE (",
      "  hint: --metric is JMESPath on a job's metrics element; see one with bl metrics get -j JOB_ID (a job of BASE)",
      "[error] --metric metrics[?type=='nope'].data.x | [0] gives no score for any job of group CAND ("]),
    (["--unit", "job.nope"],
     ["[error] --unit job.nope gives no instance for any job of group BASE",
      "  hint: --unit is JMESPath on a job-list entry; see the fields of one with bl jobs get -g BASE --page-size 1"]),
])
def test_an_option_that_finds_nothing_is_an_error_naming_it(api, args, lines):
    result = api("compare", "-g", "BASE,CAND", *args, "--output", "table")
    assert result.code == 1 and result.out == ""
    for line in lines:
        assert any(err.startswith(line) for err in result.err.splitlines()), (line, result.err)
    assert ("--unit" in result.err) == (args[0] == "--unit")  # the hint names the right option


def test_an_empty_baseline_is_an_error(api):
    result = api("compare", "-g", "GEMPTY,CAND")
    assert result.code == 1 and result.out == ""
    assert "[error] group GEMPTY has no job: nothing to compare" in result.err
    filtered = api("compare", "-g", "BASE,CAND", "--template", "nope")
    assert filtered.code == 1 and "[error] group BASE has no job with --template nope: nothing to compare" in filtered.err


def test_slices_by_template_are_each_templates_comparison(api):
    [result] = ok_json(api("compare", "-g", "BASE,CAND2", "--by", "template", "--cluster", "^(.+?)__"))
    keys = [s["key"] for s in result["slices"]]
    assert keys == sorted(keys) and len(keys) == 3 and result["by"] == "template"
    raw = []
    for s in result["slices"]:
        [alone] = ok_json(api("compare", "-g", "BASE,CAND2", "--template", s["key"], "--cluster", "^(.+?)__"))
        assert (s["baseline_jobs"], s["candidate_jobs"]) == (alone["groups"][0]["jobs"], alone["groups"][1]["jobs"])
        for name in ("instances", "clusters", "pass_rate_difference", "se", "ci95", "p_value", "sign_test_p", "mde",
                     "mean_difference", "mean_difference_ci95", "improved", "regressed", "unchanged"):
            assert s["paired"][name] == pytest.approx(alone["paired"][name], rel=1e-12), name
        raw.append(s["paired"]["p_value"])
    assert [s["paired"]["p_value_adjusted"] for s in result["slices"]] == pytest.approx(holm(raw), rel=1e-12)
    table = api("compare", "-g", "BASE,CAND2", "--by", "template", "--output", "table").out
    assert "slices (pass rate, candidate - baseline" in table
    assert all(k in table for k in keys)


def test_boolean_metric(api):
    [result] = ok_json(api("compare", "-g", "BASE,CAND2", "--metric", "metrics[?type=='eval'].data.resolved | [0]",
                           "--pass-threshold", "5"))
    # resolved is true exactly for succeeded jobs, which are the ones at or above 0.5
    [plain] = ok_json(api("compare", "-g", "BASE,CAND2"))
    assert result["groups"][0]["pass_rate"] == plain["groups"][0]["pass_rate"]
    assert result["paired"]["pass_rate_difference"] == plain["paired"]["pass_rate_difference"]


# ------------------------------------------------------------- renderings
def test_table_summary_and_markdown_lead_with_the_verdict(api):
    [element] = ok_json(api("compare", "-g", "BASE", "-g", "CAND2"))
    table = api("compare", "-g", "BASE", "-g", "CAND2", "--output", "table")
    assert table.code == 0, table.err
    assert table.out.startswith(element["summary"] + "\n" + element["noise_floor"]["summary"]
                                + "\n\ncompare CAND2 with baseline BASE\n")
    assert element["summary"].startswith("CAND2 is better than BASE: +")
    assert "pass rate   +" in table.out and "pp*" in table.out  # adjusted p < 0.05: marked
    assert table.out.rstrip().endswith("* p < 0.05")
    markdown = api("compare", "-g", "BASE", "-g", "CAND2", "--output", "markdown")
    assert markdown.code == 0 and markdown.out.startswith(f"### CAND2 vs baseline BASE\n\n**{element['summary']}**")
    assert "| pass rate | **+" in markdown.out
    [cand] = ok_json(api("compare", "-g", "BASE", "-g", "CAND"))
    assert cand["summary"].startswith("CAND is not distinguishable from BASE: differences below ±")
    assert f"are detected less than 80% of the time with {cand['paired']['instances']} instances" in cand["summary"]


@pytest.mark.parametrize("renderer", ["table", "markdown"])
def test_changes_chooses_the_instances_listed(api, renderer):
    [element] = ok_json(api("compare", "-g", "BASE,CAND2"))
    every = element["instances"]
    improved = [e for e in every if e["difference"] > 0]
    regressed = [e for e in every if e["difference"] < 0]
    assert len(every) > 20 and improved and regressed

    def shown(instance: str) -> str:  # markdown escapes its punctuation
        return instance.replace("_", "\\_").replace("-", "\\-") if renderer == "markdown" else instance

    def listed(*extra):
        out = api("compare", "-g", "BASE,CAND2", "--output", renderer, *extra).out
        return [e["instance"] for e in every if re.search(rf"(  |\| ){re.escape(shown(e['instance']))}( \||$)",
                                                            out, re.M)]

    limit = {"table": 10, "markdown": 20}[renderer]
    assert listed() == [e["instance"] for e in every[:limit]]
    assert listed("--changes", "all") == [e["instance"] for e in every]
    assert listed("--changes", "improved") == [e["instance"] for e in improved]
    assert listed("--changes", "regressed") == [e["instance"] for e in regressed]


def test_per_instance_csv_has_a_row_per_paired_instance(api, backend):
    result = api("compare", "-g", "BASE,CAND,CAND2", "--per-instance", "--cluster", "^(.+?)__", "--output", "csv")
    assert result.code == 0, result.err
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert list(rows[0]) == ["baseline", "candidate", "instance", "cluster", "baseline_pass_rate",
                             "candidate_pass_rate", "difference", "baseline_mean", "candidate_mean",
                             "mean_difference", "baseline_jobs", "candidate_jobs", "p_value", "q_value",
                             "beyond_noise", "aa_changed"]
    elements = ok_json(api("compare", "-g", "BASE,CAND,CAND2"))
    base = raw_group(backend, "BASE")
    for element in elements:
        mine = [r for r in rows if r["candidate"] == element["candidate"]]
        assert len(mine) == element["paired"]["instances"]
        cand = raw_group(backend, element["candidate"])
        for row in mine:
            b, c = base[row["instance"]], cand[row["instance"]]
            assert row["baseline"] == "BASE" and row["cluster"] == repo(row["instance"])
            assert float(row["baseline_pass_rate"]) == pytest.approx(np.mean(b["passes"]))
            assert float(row["difference"]) == pytest.approx(np.mean(c["passes"]) - np.mean(b["passes"]))
            assert float(row["mean_difference"]) == pytest.approx(np.mean(c["scores"]) - np.mean(b["scores"]))
            assert (int(row["baseline_jobs"]), int(row["candidate_jobs"])) == (len(b["jobs"]), len(c["jobs"]))
        changed = {e["instance"] for e in element["instances"]}
        assert {r["instance"] for r in mine if float(r["difference"]) != 0} == changed
    as_json = ok_json(api("compare", "-g", "BASE,CAND", "--per-instance"))
    assert as_json[0]["cluster"] is None and set(as_json[0]) == set(rows[0])


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_report_file(api, tmp_path):
    path = tmp_path / "report.html"
    result = api("compare", "-g", "BASE,CAND,CAND2", "--report", str(path), "--query", "length(@)")
    assert result.code == 0 and result.out == "2\n"
    assert f"wrote {path}" in result.err
    parser = _Tags()
    parser.feed(path.read_text(encoding="utf-8"))
    assert parser.tags.count("section") == 2 and parser.tags.count("svg") >= 6 and "script" not in parser.tags


# ------------------------------------------------------------------ errors
def test_one_group_is_a_usage_error(api, sandbox):
    sandbox.reset_stats()
    result = api("compare", "-g", "BASE")
    assert result.code == 2 and "compare needs at least two different groups: -g BASELINE -g CANDIDATE" in result.err
    assert api("compare", "-g", "BASE,BASE").code == 2  # the same id twice is one group
    assert api("compare", "-j", "BASE-J0001,BASE-J0002").code == 2  # groups only
    assert sum(v for k, v in sandbox.stats.items() if k in ("job_list", "group_metrics_detail")) == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--metric", "metrics["], "invalid --metric expression: Invalid jmespath expression: Incomplete expression"),
    (["--unit", "job.["], "invalid --unit expression"),
    (["--pass-threshold", "nan"], "--pass-threshold must be a finite number, not nan"),
    (["--pass-threshold", "inf"], "--pass-threshold must be a finite number, not inf"),
    (["--output", "pdf"], "--output must be one of json, jsonl, yaml, table, text, csv, markdown, parquet"),
    (["--margin", "0"], "--margin must be at least 0.01"),
    (["--margin", "nan"], "--margin must be a finite number, not nan"),
])
def test_bad_options_stop_before_any_request(api, sandbox, args, message):
    sandbox.reset_stats()
    result = api("compare", "-g", "BASE,CAND", *args)
    assert result.code == 2 and message in result.err and result.out == ""
    assert not sandbox.stats.get("job_list") and not sandbox.stats.get("group_metrics_detail")


@pytest.mark.parametrize(("kind", "message"), [
    ("file", "it is a file, not a directory"),
    ("symlink", "it is a symbolic link; refusing to write through it (name its target)"),
    ("fifo", "it exists and is not a directory (a FIFO, socket or device)"),
    ("missing parent", "the directory {tmp}/nope does not exist"),
    ("under a file", "a component of the path is a file, not a directory"),
])
def test_a_report_dir_that_cannot_be_one_stops_before_any_request(api, sandbox, tmp_path, kind, message):
    """--report-dir DIR is checked as --report FILE is: a usage error before the groups are fetched."""
    target = tmp_path / "dir"
    if kind == "file":
        target.write_text("precious")
    elif kind == "symlink":
        (tmp_path / "real").mkdir()
        target.symlink_to(tmp_path / "real")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "missing parent":
        target = tmp_path / "nope" / "dir"
    else:
        (tmp_path / "afile").write_text("precious")
        target = tmp_path / "afile" / "dir"
    before = sorted(p.name for p in tmp_path.rglob("*"))
    sandbox.reset_stats()
    result = api("compare", "-g", "BASE", "-g", "CAND2", "--report-dir", str(target))
    assert result.code == 2 and result.out == ""
    assert f"cannot write --report-dir {target}: {message.format(tmp=tmp_path)}" in result.err
    assert sandbox.stats["requests"] == 0
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_failed_candidate_leaves_the_others(api):
    result = api("compare", "-g", "BASE,NOPE,CAND")
    assert result.code == 1
    assert [r["candidate"] for r in json.loads(result.out)] == ["CAND"]
    assert "NOPE: API error 404" in result.err
    no_baseline = api("compare", "-g", "NOPE,CAND", "--output", "table")
    assert no_baseline.code == 1 and no_baseline.out == "(no comparison)\n"
    assert "[warn] nothing compared: the baseline NOPE failed" in no_baseline.err
    assert json.loads(api("compare", "-g", "NOPE,CAND").out) == []


def test_a_report_that_cannot_be_written_costs_nothing_printed(api, tmp_path):
    result = api("compare", "-g", "BASE,CAND", "--report", str(tmp_path), "--query", "[0].candidate")
    assert result.code == 1 and json.loads(result.out) == "CAND"
    assert f"cannot write {tmp_path}: it is a directory" in result.err


# --------------------------------------------------------------- jobs table
def test_jobs_table_is_one_row_per_job(api, backend):
    rows = ok_json(api("jobs", "table", "-g", "BASE,G1"))
    jobs = every_page(backend, "/openapi/jobs", "jobs", group_id="BASE") + every_page(
        backend, "/openapi/jobs", "jobs", group_id="G1")
    assert [r["job_id"] for r in rows] == [j["job_id"] for j in jobs]
    metrics = {m["job_id"]: m for g in ("BASE", "G1") for m in every_page(backend, "/openapi/metrics", "metrics",
                                                                          group_id=g)}
    for row, job in zip(rows, jobs, strict=True):
        assert (row["group_id"], row["status"], row["instance"]) == (job["group_id"], job["status"],
                                                                      job["instance_id"])
        element = metrics[job["job_id"]]
        evals = [m["data"]["task_score"] for m in element["metrics"] if m["type"] == "eval"]
        assert row["score"] == (evals[0] if evals else None)
        assert row["pass"] == (None if not evals else evals[0] >= 0.5)
        if element["run_metrics"]:
            assert row["duration_s"] == float(element["run_metrics"][0]["duration_s"])
            assert row["tokens_sent"] == int(element["run_metrics"][0]["tokens_sent"])
            assert isinstance(row["tokens_sent"], int) and isinstance(row["duration_s"], float)
        else:
            assert row["duration_s"] is None


def test_jobs_table_formats_and_fields(api):
    fields = ["--fields", "job_id,score", "--fields", "pass"]
    rows = ok_json(api("jobs", "table", "-g", "G1", *fields))
    assert list(rows[0]) == ["job_id", "score", "pass"] and len(rows) == 40
    lines = api("--no-pretty", "jobs", "table", "-g", "G1", *fields, "--output", "jsonl").out.splitlines()
    assert [json.loads(line) for line in lines] == rows
    text = api("jobs", "table", "-g", "G1", *fields, "--output", "csv").out
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["job_id", "score", "pass"] and len(parsed) == 41
    assert parsed[1] == [rows[0]["job_id"], "" if rows[0]["score"] is None else repr(rows[0]["score"]),
                         {True: "true", False: "false", None: ""}[rows[0]["pass"]]]
    table = api("jobs", "table", "-g", "G1", *fields, "--output", "table").out
    assert table.splitlines()[0].split() == ["job_id", "score", "pass"]
    bad = api("jobs", "table", "-g", "G1", "--fields", "job_id,nope")
    assert bad.code == 2 and "--fields: unknown column 'nope'; the columns are: group_id, job_id" in bad.err


def test_jobs_table_keeps_the_order_fields_asks_for_in_every_format(api):
    # Not the declared order (job_id comes before score there): every format keeps the one asked for.
    fields = ["--fields", "score,status,job_id"]
    assert list(ok_json(api("jobs", "table", "-g", "G1", *fields))[0]) == ["score", "status", "job_id"]
    csv_header = next(csv.reader(io.StringIO(api("jobs", "table", "-g", "G1", *fields, "--output", "csv").out)))
    assert csv_header == ["score", "status", "job_id"]
    table = api("jobs", "table", "-g", "G1", *fields, "--output", "table").out
    assert table.splitlines()[0].split() == ["score", "status", "job_id"]
    markdown = api("jobs", "table", "-g", "G1", *fields, "--output", "markdown").out
    assert markdown.splitlines()[0] == "| score | status | job\\_id |"


def test_jobs_table_of_several_groups_is_one_table(api):
    text = api("jobs", "table", "-g", "G1,G2", "--fields", "group_id,job_id", "--output", "csv").out
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == ["group_id", "job_id"] and len(parsed) == 81  # one header for both groups
    assert [r[0] for r in parsed[1:]] == ["G1"] * 40 + ["G2"] * 40
    markdown = api("jobs", "table", "-g", "G1", "--fields", "job_id,score", "--output", "markdown").out
    assert markdown.splitlines()[:2] == ["| job\\_id | score |", "| --- | ---: |"]


def test_jobs_table_filters_as_jobs_get(api, backend):
    rows = ok_json(api("jobs", "table", "-g", "BASE", "--status", "failed", "--fields", "job_id,status"))
    failed = every_page(backend, "/openapi/jobs", "jobs", group_id="BASE", status="failed")
    assert rows == [{"job_id": j["job_id"], "status": "failed"} for j in failed] and rows


# --------------------------------------------------------------- the client
def test_python_client_returns_the_same(sandbox, api, module_env):
    cli_rows = ok_json(api("jobs", "table", "-g", "CAND"))
    cli_compare = ok_json(api("compare", "-g", "BASE,CAND", "--pass-threshold", "0.7"))
    with Client(host=sandbox.url, api_key=sandbox.api_key) as bl:
        rows = bl.jobs.table(group="CAND")
        result = bl.compare(group=["BASE", "CAND"], pass_threshold=0.7)
        same = bl.compare.compare(group="BASE,CAND", pass_threshold=0.7)
    assert rows == cli_rows
    assert result == same == cli_compare
    assert all(list(r) == list(rows[0]) for r in rows)  # one set of columns: a DataFrame takes them as they are
    assert all(isinstance(r["duration_s"], (float, type(None))) for r in rows)


def test_python_client_writes_the_report_and_refuses_what_the_cli_refuses(sandbox, module_env, tmp_path):
    from benchloop.sdk.errors import PartialFailure, UsageError

    path = tmp_path / "report.html"
    with Client(host=sandbox.url, api_key=sandbox.api_key) as bl:
        [result] = bl.compare(group=["BASE", "CAND2"], report=path)
        with pytest.raises(UsageError, match="at least two different groups"):
            bl.compare(group=["BASE"])
        with pytest.raises(UsageError, match="invalid --metric expression"):
            bl.compare(group=["BASE", "CAND"], metric="metrics[")
        with pytest.raises(UsageError, match="invalid --cluster regular expression"):
            bl.compare(group=["BASE", "CAND"], cluster="(")
        with pytest.raises(PartialFailure) as failed:
            bl.compare(group=["BASE", "CAND"], metric="metrics[0].nope")
        clustered = bl.compare(group=["BASE", "CAND2"], cluster="^(.+?)__", by="template")
    assert result["candidate"] == "CAND2" and "<svg" in path.read_text(encoding="utf-8")
    assert [gid for gid, _ in failed.value.failures] == ["BASE", "CAND"] and failed.value.results == []
    assert failed.value.failures[0][1].startswith("--metric metrics[0].nope gives no score for any job of group BASE")
    assert clustered[0]["paired"]["clusters"] == 8 and len(clustered[0]["slices"]) == 3


def test_margin_and_clusters_end_to_end(api, backend):
    """--margin PP through the CLI: the TOST of the raw data (statsmodels), and the clusters'
    warning with their effective number on stderr."""
    from statsmodels.stats.weightstats import ttost_paired
    result = api("compare", "-g", "BASE,CAND", "--margin", "30", "--cluster", "^(.+?)__")
    [element] = ok_json(result)
    p = element["paired"]
    assert p["margin"] == element["margin"] == 0.3
    base, cand = raw_group(backend, "BASE"), raw_group(backend, "CAND")
    scored_b = {k: v for k, v in base.items() if v["scores"]}
    scored_c = {k: v for k, v in cand.items() if v["scores"]}
    paired = sorted(set(scored_b) & set(scored_c))
    b = np.array([np.mean(scored_b[k]["passes"]) for k in paired])
    c = np.array([np.mean(scored_c[k]["passes"]) for k in paired])
    # the equivalence test is t's at the Bell-McCaffrey df with the CR2 se under --cluster; its
    # unclustered form is statsmodels' paired TOST exactly
    [plain] = ok_json(api("compare", "-g", "BASE,CAND", "--margin", "30"))
    assert plain["paired"]["tost_p"] == pytest.approx(ttost_paired(c, b, -0.3, 0.3)[0], rel=1e-8)
    se, df = cr2_bm(c - b, [repo(k) for k in paired])
    d = float(np.mean(c - b))
    expected = max(sp.t.sf((d + 0.3) / se, df), sp.t.cdf((d - 0.3) / se, df))
    assert p["tost_p"] == pytest.approx(expected, rel=1e-8)
    assert p["equivalent"] == (p["tost_p"] < 0.05)
    assert "±30.0 pp" in element["summary"]
    assert "[warn] --cluster: the" in result.err and f"as many as {p['effective_clusters']:.1f}" in result.err


def test_query_tables_round_their_numbers(api):
    """--query with --output table prints numbers for people: six significant digits, no 1e-17."""
    [element] = ok_json(api("compare", "-g", "BASE,CAND"))
    query = "[].paired.{d: pass_rate_difference, ci: ci95}"
    table = api("compare", "-g", "BASE,CAND", "--query", query, "--output", "table")
    assert table.code == 0
    raw = element["paired"]["pass_rate_difference"]
    low = element["paired"]["ci95"][0]
    assert len(repr(raw)) > 10 and len(repr(low)) > 10  # floats with many digits, as the JSON keeps them
    for out in (table.out, api("compare", "-g", "BASE,CAND", "--query", query, "--output", "markdown").out):
        assert f"{raw:.6g}" in out and repr(raw) not in out
        assert f"[{low:.6g}," in out and repr(low) not in out
