"""``bl trend --report FILE.html``: the series as one self-contained HTML page.

Why a page: a weekly series is read by people who were not at the terminal, and a chart
of the runs beside their noise band says at a glance what the table says run by run.  The
page is made as the comparison's report is (:mod:`.html_report`): no network (a
Content-Security-Policy of ``default-src 'none'``), no script, the chart inline SVG drawn
from data (:func:`.charts.series`), the markup a Jinja2 template
(``templates/trend.html``) autoescaped through :mod:`benchloop.base.templating`, so a
run id from a hostile backend is text wherever it lands (a cell, a tooltip, a label).
The combine masks the API key in the element before it gets here.

It shows the summary sentence, the chart (each run's pass rate over the common
instances with its 95% CI, the first run's control limits as a band, a run outside them a
red diamond), the table of ``--output table`` with the run's number in the chart, and the
drift, the pooled step and how the limits are made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import charts, floor_text

NUMERIC = (True, False, True, False, True, True, True, True, False)  # the columns right-aligned


def generate(element: dict[str, Any]) -> Iterator[str]:
    """The page of one trend (``bl trend``'s element), piece by piece."""
    from ..base.templating import generate as from_template

    header, *rows = floor_text.trend_rows(element, str)
    numbered = [[str(i + 1), *row] for i, row in enumerate(rows)]
    flagged = [bool(r.get("flagged")) for r in element["runs"]]
    title = "bl trend: " + ", ".join(str(g) for g in element["groups"])
    return from_template("compare", "trend.html", title=title, summary=element["summary"],
                         series=charts.series(element["runs"]), header=["#", *header],
                         numeric=NUMERIC, rows=list(zip(numbered, flagged, strict=True)),
                         notes=floor_text.trend_notes(element), instances=element["instances"])


def render(element: dict[str, Any]) -> str:
    """:func:`generate` as one string."""
    return "".join(generate(element))
