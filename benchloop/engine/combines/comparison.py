"""``compare``: the first id is the baseline, every other one a candidate (``bl compare``).

Each id's value is its flat job rows (step ``job_rows``, the columns its ``keep``
names); the figures are ``benchloop.compare.stats``'s, one element per candidate, in
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
instance of every candidate, the side-by-side page of a baseline trial and a candidate
trial (the command ``view``, run through the engine: ``bl view -j BASE_JOB -j CAND_JOB``),
``DIR/instances/<candidate>/<instance>.html``, linked from the changed-instance table with
relative links: the folder works from ``file://`` and zipped.  Each side's trial is the
one that stands for its group on the instance (``viewer.trials.representative``: the most
common outcome there, a failing one on a tie), among the jobs the comparison counted.
"""

from __future__ import annotations

import os
from typing import Any

from ...base.masking import scrub_value
from ..combinecall import CombineCall, Combined, CombineError
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


@combine("compare")
def compare(call: CombineCall) -> Combined:
    from ...compare import html_report, markdown, terminal
    from ...compare.caveats import NothingToCompare
    from ...compare.stats import compare_groups, per_instance

    options = call.options
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
                                     check=_filters(options))
        except NothingToCompare as exc:  # a group that cannot take part: said before any figure
            raise CombineError(exc.problems) from None
        for line in dict.fromkeys(w for r in results for w in r["warnings"]):
            call.log.warn(line)
        elements = per_instance(call.values, cluster=options.get("cluster")) if options.get(
            "per_instance") else results
    else:
        call.log.warn(why + (" (no --report written)" if options.get("report") else ""))
    shared = scrub_value(results, call.secrets)  # for people: the key never in a page or a paste
    changes = options.get("changes") or "largest"
    renderings = {} if options.get("per_instance") else {
        "table": lambda: terminal.render(shared, changes) if shared else "(no comparison)\n",
        "markdown": lambda: markdown.render(shared, changes) if shared else "",
    }
    report = options.get("report")
    declared = not options.get("per_instance")
    if report == "-":  # the page instead of the elements (none when nothing was compared)
        page = (lambda: html_report.render(shared, changes)) if results else None
        return Combined(elements, renderings, page=page, declared=declared)
    files = {str(report): lambda: html_report.render(shared, changes)} if report and results else {}
    folder = options.get("report_dir")
    if folder and results:
        links = instance_pages(call, results, str(folder))
        files[os.path.join(str(folder), "index.html")] = lambda: html_report.render(shared, changes, links)
    return Combined(elements, renderings, files, declared=declared)


def instance_pages(call: CombineCall, results: list[dict[str, Any]], folder: str) -> dict[tuple[str, str], str]:
    """Write the side-by-side page of every changed instance under ``folder``; the relative link
    of each page written, by (candidate, instance)."""
    from urllib.parse import quote

    from ...base.files import safe_component
    from ...viewer.trials import representative

    passes: dict[str, dict[str, Any]] = {}
    for ident, rows in call.values:
        passes[ident] = {str(r.get("job_id")): r.get("pass") for r in rows if isinstance(r, dict)}
    options = call.options
    links: dict[tuple[str, str], str] = {}
    pages = [(r, e) for r in results for e in r.get("instances") or []]
    if pages:
        call.log.info(f"--report-dir: {len(pages)} side-by-side page(s) of the changed instances")
    for result, entry in pages:
        base, cand = result["baseline"], result["candidate"]
        trials = []
        for group, side in ((base, "baseline"), (cand, "candidate")):
            jobs = [{"job_id": j, "pass": passes.get(group, {}).get(j)} for j in entry[side]["jobs"]]
            trials.append(str(representative(jobs)["job_id"]) if jobs else None)
        if None in trials:
            continue
        relative = "/".join([PAGES, safe_component(str(cand)), safe_component(f"{entry['instance']}.html")])
        path = os.path.join(folder, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        ran = call.run("view", {"job": trials, "output_dir": path, "metric": options.get("metric"),
                                "pass_threshold": options.get("pass_threshold")})
        if path in ran.paths:
            links[(str(cand), str(entry["instance"]))] = quote(relative)
    return links
