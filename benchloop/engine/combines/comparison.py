"""``compare``: the first id is the baseline, every other one a candidate (``bl compare``).

Each id's value is its flat job rows (step ``job_rows``, the columns its ``keep``
names), gathered by instance as they were read (``into: instances``: what is held is
per-instance aggregates, never the rows; ``benchloop.compare.groups``); the figures are ``benchloop.compare.stats``'s, one element per candidate, in
the order of the ids.  A candidate that failed is left out (its failure is in the
summary and the exit code); without the baseline nothing is compared.  A group that
cannot take part (no job, a ``--metric`` that scores none of its jobs, a ``--unit`` that
gives none an instance) stops the command before anything is printed
(``benchloop.compare.caveats``); each element's warnings go to stderr as well.

Besides the elements, the comparison renders two formats itself: ``--output table``
(``benchloop.compare.terminal``, a summary for a terminal) and ``--output markdown``
(the same for a pull request), and ``--report FILE`` asks for a self-contained HTML page
(``benchloop.compare.html_report``; ``-`` prints it instead of the elements).  The three
are made for people to share, so the call's API key is masked in them (a backend may
echo it inside an id).  ``--per-instance`` makes the elements one flat row per paired
instance instead (for ``--output csv``).

``--report-dir DIR`` writes the report as ``DIR/index.html`` and, for every changed
instance the report lists (``--changes``) of every candidate, the side-by-side page of a
baseline trial and a candidate trial (the command ``view``, run through the engine: ``bl
view -j BASE_JOB -j CAND_JOB``), ``DIR/instances/<candidate>/<instance>.html``, linked from
the changed-instance table with relative links: the folder works from ``file://`` and
zipped.  Each side's trial is the one that stands for its group on the instance
(``viewer.trials.representative``: the most common outcome there, a failing one on a tie),
among the jobs the comparison counted.  The folder holds exactly the pages the index links:
a page an earlier run wrote there (a ``bl view`` page, ``instances/*/*.html``) that this
run did not write is removed; nothing else in ``DIR`` is touched.  One page costs only itself:
whatever stops it is a failure of that page (said with its instance, exit 1), and the
folders under ``DIR`` are made without following a symbolic link (``files.real_dirs``).
``DIR`` was checked before any request (``path: checked_dir``: a directory, or a new one
whose parent exists).
"""

from __future__ import annotations

import os
from typing import Any

from ...base.errors import AuthError, BenchloopError, Cancelled
from ...base.masking import scrub_value
from ..combinecall import CombineCall, Combined, CombineError, declared_rows, rows_shape
from .registry import combine

PAGES = "instances"  # the folder of the side-by-side pages under --report-dir


def _nothing(call: CombineCall) -> str | None:
    """Why there is nothing to compare (a line for stderr), or None."""
    if not call.ids or call.ids[0] in call.failed:
        return f"nothing compared: the baseline {call.ids[0] if call.ids else ''} failed"
    if len(call.values) < 2:
        return "nothing compared: every candidate failed"
    return None


def _filters(options: dict[str, Any]) -> str:
    given = [f"--{name} {options[name]}" for name in ("status", "template") if options.get(name) is not None]
    return f" with {' and '.join(given)}" if given else ""


def _margin(options: dict[str, Any]) -> float | None:
    """``--margin PP`` as the fraction the figures use (2 pp is 0.02), or None."""
    value = options.get("margin")
    return None if value is None else float(value) / 100.0


def _level(value: Any) -> float:
    """``--fdr``: a level strictly between 0 and 1."""
    from ...base.errors import UsageError
    from ...compare.evidence import FDR

    level = FDR if value is None else float(value)
    if not 0 < level < 1:
        raise UsageError(f"--fdr must be between 0 and 1 (got {value})")
    return level


@combine("compare")
def compare(call: CombineCall) -> Combined:
    from ...compare import html_report, markdown, sequential, terminal
    from ...compare.caveats import NothingToCompare
    from ...compare.stats import compare_groups, per_instance

    options = call.options
    fdr = _level(options.get("fdr"))
    why = _nothing(call)
    results: list[dict[str, Any]] = []
    elements: list[dict[str, Any]] = []
    if why is None:
        try:
            results = compare_groups(call.values, metric=options["metric"],
                                     pass_threshold=float(options["pass_threshold"]), unit=options["unit"],
                                     costs=call.params.texts("costs"), cluster=options.get("cluster"),
                                     by=options.get("by"), status=options.get("status"),
                                     outcome_statuses=call.params.texts("outcome_statuses"),
                                     check=_filters(options), margin=_margin(options), fdr=fdr)
        except NothingToCompare as exc:  # a group that cannot take part: said before any figure
            raise CombineError(exc.problems) from None
        final = call.params.optional_texts("final_statuses")
        if final is not None and (options.get("sequential") or options.get("watch")):
            sequential.add(results, call.values, final)
        elif final is not None:
            sequential.warn_running(results, call.values, final)
        for line in dict.fromkeys(w for r in results for w in r["warnings"]):
            call.log.warn(line)
        elements = per_instance(call.values, cluster=options.get("cluster"), fdr=fdr) if options.get(
            "per_instance") else results
    else:
        call.log.warn(why + (" (no --report written)" if options.get("report") else ""))
    changes = options.get("changes") or "largest"
    if (options.get("why") or options.get("why_all")) and results:
        add_divergences(call, results, changes, every=bool(options.get("why_all")), fdr=fdr)
    for r in results:  # what noise alone would give, whatever the format (csv rows carry no sentence)
        call.log.note(scrub_value(f"{r['candidate']}: {r['evidence']['summary']}", call.secrets))
        if (r.get("divergences") or {}).get("note"):
            call.log.note(scrub_value(f"{r['candidate']}: --why: {r['divergences']['note']}", call.secrets))
    # For people, the key never in a page or a paste: the results with it masked, made only for
    # a rendering, a report or a page that is asked for (a copy of 10^5 changed instances is big).
    shared = _Masked(results, call.secrets)
    shape = None
    if "divergences" in (results[0] if results else {}) and not options.get("per_instance") and (
            options.get("output") in call.params.texts("why_formats")):  # --why --output csv: its rows
        columns = call.params.columns("why_columns")
        elements = declared_rows(columns, why_documents(results))
        shape = rows_shape(columns)
    from ...viewer import divergences as why_text

    renderings = {} if options.get("per_instance") else {
        "table": lambda: (terminal.render(shared(), changes) + why_text.text(shared())) if results else "(no comparison)\n",
        "markdown": lambda: (markdown.render(shared(), changes) + why_text.markdown(shared())) if results else "",
    }
    watched: dict[str, Any] = {}
    if results and "sequential" in results[0]:  # what --watch reads (engine/watching.py)
        state, line, settled = sequential.state(results)
        watched = {"state": state, "state_line": line, "settled": settled}
    report = options.get("report")
    declared = not options.get("per_instance") and shape is None
    if report == "-":  # the page instead of the elements (none when nothing was compared)
        page = (lambda: html_report.render(shared(), changes)) if results else None
        return Combined(elements, renderings, page=page, declared=declared, shape=shape, **watched)
    files: dict[str, Any] = {str(report): lambda: html_report.generate(shared(), changes)} if report and results else {}
    folder = options.get("report_dir")
    failures: tuple[tuple[str, str], ...] = ()
    if folder and results and options.get("watch"):  # the pages of the last look only, once it is printed
        def index() -> Any:
            links, _lost = instance_pages(call, results, str(folder), changes)
            return html_report.generate(shared(), changes, links)

        files[os.path.join(str(folder), "index.html")] = index
    elif folder and results:
        links, found = instance_pages(call, results, str(folder), changes)
        failures = tuple(found)
        files[os.path.join(str(folder), "index.html")] = lambda: html_report.generate(shared(), changes, links)
    return Combined(elements, renderings, files, declared=declared, shape=shape, failures=failures, **watched)


class _Masked:
    """The results with the call's keys masked (``scrub_value``), made at the first call and kept."""

    def __init__(self, results: list[dict[str, Any]], secrets: tuple[str, ...]):
        self._results, self._secrets = results, secrets
        self._made: list[dict[str, Any]] | None = None

    def __call__(self) -> list[dict[str, Any]]:
        if self._made is None:
            self._made = scrub_value(self._results, self._secrets)
        return self._made


WHY_EXTRA = 2  # with --why: besides the pair, up to this many more passing (and failing) trials per instance
WHY_WORKERS = 4  # with --why: instances whose trials are fetched at once


def why_documents(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each ``--why`` row reads its columns from (the combine's ``with.why_columns``): per
    divergence of each candidate, ``{baseline, candidate, divergence, change, kind}`` (change:
    the one of the argument its shape is about, else its first; kind: its DivergenceKind)."""
    out = []
    for r in results:
        summary = r.get("divergences") or {}
        kinds = {(d["direction"], k["kind"]): k for d in summary.get("directions") or [] for k in d["kinds"]}
        for d in summary.get("divergences") or []:
            changes = d.get("changes") or []
            change = next((c for c in changes if c["argument"] == d.get("argument")), changes[0] if changes else None)
            out.append({"baseline": r["baseline"], "candidate": r["candidate"], "divergence": d, "change": change,
                        "kind": kinds.get((d["direction"], d["kind"]))})
    return out


def _passes(call: CombineCall) -> dict[str, dict[str, Any]]:
    """Per group, each job's pass (None: not scored), as the comparison counted it (the jobs
    with an instance: the only ones a changed instance lists)."""
    from ...compare.groups import Group

    return {ident: value.passes_by_job() if isinstance(value, Group) else
            {str(r.get("job_id")): r.get("pass") for r in value if isinstance(r, dict)}
            for ident, value in call.values}


def why_picks(result: dict[str, Any], changes: str, every: bool) -> tuple[list[dict[str, Any]], int, bool]:
    """The changed instances ``--why`` looks at, how many ``--changes`` picks in all, and whether
    ``--why`` fell back to all of them: of those ``--changes`` picks (``all`` and ``largest``:
    every changed instance), the ones beyond noise (``evidence``: BH q-value at most ``--fdr``),
    or every one with ``--why-all`` - and every one too when none is beyond noise (a user who
    asks where the changes part gets an answer, said to be over changes that are mostly noise)."""
    from ...compare.display import changed

    picked = changed(result, "all" if changes == "largest" else changes, None)[0]
    if every:
        return picked, len(picked), False
    beyond = [e for e in picked if e.get("beyond_noise")]
    return (beyond, len(picked), False) if beyond else (picked, len(picked), bool(picked))


def add_divergences(call: CombineCall, results: list[dict[str, Any]], changes: str, *,
                    every: bool = False, fdr: float = 0.1) -> None:
    """``--why``: each result gets ``divergences``, the divergence summary of its candidate
    (``viewer.divergences``) over the changed instances :func:`why_picks` gives (beyond noise,
    or all with ``--why-all``).  For each one the trial pair (a passing trial of the
    side that passes more, a failing one of the other) and up to ``WHY_EXTRA`` more passing
    and failing trials of the instance are fetched through ``bl view`` (``call.run``), the
    instances ``WHY_WORKERS`` at a time; a pair that cannot be fetched is said and left out."""
    from concurrent.futures import ThreadPoolExecutor

    from ...viewer import divergences as dv

    passes = _passes(call)
    options = call.options
    common = {"output": "json", "metric": options.get("metric"), "pass_threshold": options.get("pass_threshold")}
    cache: dict[str, dict[str, Any]] = {}

    def fetch(jobs: list[str]) -> dict[str, dict[str, Any]]:
        got: dict[str, dict[str, Any]] = {}
        wanted = [j for j in dict.fromkeys(jobs) if j not in cache]
        for i in range(0, len(wanted), 2):  # bl view takes two trials at a time
            ran = call.run("view", {**common, "job": wanted[i:i + 2]})
            for _, value in ran.values:
                if isinstance(value, dict) and value.get("job_id") is not None:
                    got[str(value["job_id"])] = value
            for ident, message in ran.failures:
                call.log.warn(f"--why: trial {ident}: {message}")
        cache.update(got)
        return {j: cache[j] for j in jobs if j in cache}

    def one(result: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[Any]] | None:
        base, cand = result["baseline"], result["candidate"]
        picked = dv.sides(entry, base, cand, passes)
        if picked is None:
            return None
        (_, good), (_, bad) = picked
        others_pass: list[str] = []
        others_fail: list[str] = []
        for group, side in ((base, "baseline"), (cand, "candidate")):
            for j in entry[side]["jobs"]:
                p = passes.get(group, {}).get(str(j))
                if str(j) in (good, bad) or p is None:
                    continue
                (others_pass if p else others_fail).append(str(j))
        extra = others_pass[:WHY_EXTRA] + others_fail[:WHY_EXTRA]
        trials = fetch([good, bad, *extra])
        if good not in trials or bad not in trials:
            return None
        instance = str(entry["instance"])
        found = dv.divergence(entry, trials[good], trials[bad])
        passing = [(instance, trials[j]) for j in [good, *others_pass[:WHY_EXTRA]] if j in trials]
        failing = [(instance, trials[j]) for j in [bad, *others_fail[:WHY_EXTRA]] if j in trials]
        return found, passing, failing

    chosen = {id(r): why_picks(r, changes, every) for r in results}
    work = [(r, e) for r in results for e in chosen[id(r)][0]]
    if work:
        call.log.note(f"--why: the first difference of {len(work)} changed instance(s)")
    def guarded(result: dict[str, Any], entry: dict[str, Any]) -> Any:
        try:
            return one(result, entry)
        except (AuthError, Cancelled):
            raise  # a refused key, Ctrl-C, a full disk: the command stops, as anywhere else
        except BenchloopError as exc:  # one instance never takes the comparison down
            call.log.warn(f"--why: instance {entry['instance']} of {result['candidate']}: {exc}")
            return None

    with ThreadPoolExecutor(max_workers=WHY_WORKERS) as pool:
        done = list(pool.map(lambda rw: guarded(*rw), work))
    for result in results:
        mine = [d for (r, _), d in zip(work, done, strict=True) if r is result and d is not None]
        looked, picked, fallback = chosen[id(result)]
        result["divergences"] = dv.summarise(
            result["candidate"], result["baseline"], [d[0] for d in mine],
            [p for d in mine for p in d[1]], [f for d in mine for f in d[2]],
            scope=dv.Scope(every=every, fallback=fallback, fdr=fdr, changes=changes, picked=picked,
                           looked_at=len(looked)))


def instance_pages(call: CombineCall, results: list[dict[str, Any]], folder: str, changes: str = "largest"
                   ) -> tuple[dict[tuple[str, str], str], list[tuple[str, str]]]:
    """Write the side-by-side page of every changed instance the report lists (``changes``, as
    ``html_report`` picks them) under ``folder``, and remove the pages of an earlier run that
    this one did not write.  The relative path of each page written, by (candidate, instance),
    and the ``(path, message)`` of each page that could not be made.

    One page is one failure, never the report's: whatever stops a page (a file error, a
    symlink where it goes, a trajectory the page cannot be made of) is that page's failure,
    said with its instance; the other pages and the index are written."""
    from ...base.files import local_error, real_dirs, safe_component, user_file_problem
    from ...compare.display import changed
    from ...viewer.trials import representative

    passes = _passes(call)
    options = call.options
    links: dict[tuple[str, str], str] = {}
    failures: list[tuple[str, str]] = []
    written: set[tuple[str, str]] = set()
    top = folder.rstrip("/" + os.sep) or folder
    try:  # its parent exists (checked before any request); no symlink is followed below it
        real_dirs(os.path.dirname(top) or ".", os.path.basename(top))
    except OSError as exc:
        call.log.warn(str(local_error(exc, folder)))  # the index cannot be written either: said then
        return links, failures
    pages = [(r, e) for r in results for e in changed(r, changes, None)[0]]  # what the index lists
    if pages:
        call.log.note(f"--report-dir: {len(pages)} side-by-side page(s) of the changed instances")
    refused: dict[str, str] = {}  # a candidate folder that cannot be had: why (said once)
    for result, entry in pages:
        base, cand, instance = result["baseline"], result["candidate"], str(entry["instance"])
        trials = []
        for group, side in ((base, "baseline"), (cand, "candidate")):
            jobs = [{"job_id": j, "pass": passes.get(group, {}).get(j)} for j in entry[side]["jobs"]]
            trials.append(str(representative(jobs)["job_id"]) if jobs else None)
        if None in trials:
            continue
        names = (safe_component(str(cand)), safe_component(f"{instance}.html"))
        relative = "/".join([PAGES, *names])
        path = os.path.join(folder, *relative.split("/"))
        what = f"--report-dir: no page for instance {instance} of {cand}"
        if names[0] in refused:
            failures.append((path, f"{what}: {refused[names[0]]}"))
            continue
        try:
            real_dirs(folder, PAGES, names[0])
        except OSError as exc:
            refused[names[0]] = str(local_error(exc))
            failures.append((path, f"{what}: {refused[names[0]]}"))
            continue
        # A symlink, special file or directory there is not ours: left alone, no page.
        problem = user_file_problem(path) or ("it is a directory" if os.path.isdir(path) else None)
        if problem is not None:
            failures.append((path, f"{what}: cannot write {path}: {problem}"))
            continue
        try:
            ran = call.run("view", {"job": trials, "output_dir": path, "metric": options.get("metric"),
                                    "pass_threshold": options.get("pass_threshold")})
        except (AuthError, Cancelled):
            raise  # a full disk, Ctrl-C, a refused key: the command stops, as anywhere else
        except Exception as exc:  # noqa: BLE001 - one page never takes the report down
            reason = str(local_error(exc, path)) if isinstance(exc, OSError) else (
                str(exc) if isinstance(exc, BenchloopError) else f"internal error ({type(exc).__name__}: {exc})")
            failures.append((path, f"{what}: {reason}"))
            continue
        if path in ran.paths:
            written.add(names)
            links[(str(cand), instance)] = relative  # (percent-encoded by the report's template)
        else:
            reasons = "; ".join(dict.fromkeys(message for _, message in ran.failures)) or "not written"
            failures.append((path, f"{what}: {reasons}"))
    remove_stale_pages(call, os.path.join(folder, PAGES), written)
    return links, failures


def remove_stale_pages(call: CombineCall, pages: str, written: set[tuple[str, str]]) -> None:
    """Remove from ``pages`` (``DIR/instances``) the side-by-side pages an earlier run wrote that
    this run did not (``written``: (candidate folder, file name)), so that the folder holds
    exactly what its index links.  Only what this command writes is removed: a regular file
    named ``*.html`` in a candidate folder (``instances/<candidate>/``, no symlink followed)
    that begins as a ``bl view`` page does; a candidate folder left empty goes too."""
    import stat

    def kind(path: str) -> int:
        try:
            return os.lstat(path).st_mode
        except OSError:
            return 0

    if not stat.S_ISDIR(kind(pages)):
        return
    removed = 0
    try:
        for candidate in sorted(os.listdir(pages)):
            folder = os.path.join(pages, candidate)
            if not stat.S_ISDIR(kind(folder)):
                continue
            emptied = False
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                if (candidate, name) in written or name.startswith(".") or not name.endswith(".html"):
                    continue
                if stat.S_ISREG(kind(path)) and _a_view_page(path):
                    os.unlink(path)
                    removed += 1
                    emptied = True
            if emptied and not os.listdir(folder):
                os.rmdir(folder)
    except OSError as exc:  # a page that cannot be removed: said, the report is still written
        call.log.warn(f"--report-dir: cannot remove the pages of an earlier run from {pages}: "
                      f"{exc.strerror or exc}")
    if removed:
        call.log.note(f"--report-dir: removed {removed} page(s) of an earlier run that this report does not link")


def _a_view_page(path: str) -> bool:
    """Whether the file begins as every page of ``bl view`` does (``viewer.page``)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(2048)
    except OSError:
        return False
    return head.startswith(b"<!DOCTYPE html>\n") and b"<title>bl view: " in head
