"""``compare``: the first id is the baseline, every other one a candidate (``bl compare``).

Each id's value is its flat job rows (step ``job_rows``, the columns its ``keep``
names); the figures are ``benchloop.compare.stats``'s, one element per candidate, in
the order of the ids.  A candidate that failed is left out (its failure is in the
summary and the exit code); without the baseline nothing is compared.

Besides the elements, the comparison renders two formats itself: ``--output table``
(``benchloop.compare.terminal``, a summary with 95% CIs for a terminal) and
``--output markdown`` (the same for a pull request), and ``--report FILE`` asks for a
self-contained HTML page (``benchloop.compare.html_report``).
"""

from __future__ import annotations

from typing import Any

from ..combinecall import CombineCall, Combined
from .registry import combine


def _nothing(call: CombineCall) -> str | None:
    """Why there is nothing to compare (a line for stderr), or None."""
    if not call.ids or call.ids[0] in call.failed:
        return f"nothing compared: the baseline {call.ids[0] if call.ids else ''} failed"
    if len(call.values) < 2:
        return "nothing compared: every candidate failed"
    return None


@combine("compare")
def compare(call: CombineCall) -> Combined:
    from ...compare import html_report, markdown, terminal
    from ...compare.stats import compare_groups

    options = call.options
    why = _nothing(call)
    results: list[dict[str, Any]] = []
    if why is None:
        results = compare_groups(call.values, metric=options["metric"],
                                 pass_threshold=float(options["pass_threshold"]), unit=options["unit"],
                                 costs=call.params.texts("costs"))
    else:
        call.log.warn(why + (" (no --report written)" if options.get("report") else ""))
    renderings = {
        "table": lambda: terminal.render(results) if results else "(no comparison)\n",
        "markdown": lambda: markdown.render(results) if results else "",
    }
    report = options.get("report")
    files = {str(report): lambda: html_report.render(results)} if report and results else {}
    return Combined(results, renderings, files)
