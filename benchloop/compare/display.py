"""What the three renderings of a comparison share: number formats and escaping.

Every string in a comparison that came from the server (group, job and
instance ids) or from the user (the metric expression) is hostile input as far
as a renderer is concerned: it may carry terminal escape sequences, bidi
overrides that reorder a line, markdown that turns into links, or HTML.  The
terminal and markdown renderers pass every such string through their escaper
here (the HTML report's template escapes what it outputs itself:
``base/templating.py``), and numbers through the formatters (which only ever see
numbers computed by :mod:`.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeGuard

from ..base.hiding import EscapeTable

# Controls, bidi overrides, zero-width and other hiding characters (``base.hiding``) are
# shown as escapes: they could drive a terminal or reorder a line ("Trojan source").
_CONTROL = EscapeTable()
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+-.!|~>"})

MARK = "*"  # after a difference whose p-value, Holm-adjusted over the candidates, is below 0.05
ALPHA = 0.05
LIMITS = {"table": 10, "markdown": 20}  # changed instances listed by --changes largest


# ----------------------------------------------------------------- escaping
def terminal_text(value: Any) -> str:
    """Text that cannot drive a terminal: control and bidi characters shown as escapes."""
    return str(value).translate(_CONTROL)


def markdown_text(value: Any) -> str:
    """Text that renders as itself in markdown: no markup, links, HTML or line breaks."""
    text = terminal_text(value).translate(_MARKDOWN)
    return text.replace("&", "&amp;").replace("<", "&lt;")


# ------------------------------------------------------------------ numbers
def finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def excludes_zero(ci: Any) -> bool:
    """Whether a 95% CI ``[low, high]`` lies wholly above or below 0."""
    return (isinstance(ci, (list, tuple)) and len(ci) == 2 and finite(ci[0]) and finite(ci[1])
            and (ci[0] > 0 or ci[1] < 0))


def rate(value: Any) -> str:
    """A rate as a percentage: ``52.0%``."""
    return f"{100 * value:.1f}%" if finite(value) else "n/a"


def points(value: Any, signed: bool = True) -> str:
    """A difference of rates in percentage points: ``+3.0 pp``."""
    if not finite(value):
        return "n/a"
    return f"{100 * value:+.1f} pp" if signed else f"{100 * value:.1f} pp"


def scale_of(*values: Any) -> float:
    """The size that decides how many decimals a set of related numbers gets (a row of a table)."""
    sizes = [abs(v) for v in values if finite(v)]
    return max(sizes) if sizes else 0.0


def number(value: Any, signed: bool = False, scale: float | None = None) -> str:
    """A cost with as many decimals as its size (or the ``scale`` of its row) needs."""
    if not finite(value):
        return "n/a"
    sign = "+" if signed else ""
    size = abs(value) if scale is None else scale
    if size >= 1000:
        return f"{value:{sign},.0f}"
    if size >= 10:
        return f"{value:{sign}.1f}"
    if size >= 1:
        return f"{value:{sign}.2f}"
    return f"{value:{sign}.3f}"


def score(value: Any, signed: bool = False) -> str:
    """A score (or a difference of scores): three decimals."""
    if not finite(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def rate_ci(ci: Any) -> str:
    return f"[{rate(ci[0])}, {rate(ci[1])}]" if _pair(ci) else ""


def points_ci(ci: Any) -> str:
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]" if _pair(ci) else ""


def number_ci(ci: Any, signed: bool = False, scale: float | None = None) -> str:
    return f"[{number(ci[0], signed, scale)}, {number(ci[1], signed, scale)}]" if _pair(ci) else ""


def score_ci(ci: Any, signed: bool = False) -> str:
    return f"[{score(ci[0], signed)}, {score(ci[1], signed)}]" if _pair(ci) else ""


def cost_scale(cost: dict[str, Any]) -> float:
    """One scale for a cost's row: its means, difference and CI."""
    ci = cost.get("ci95") or []
    return scale_of(cost.get("baseline_mean"), cost.get("candidate_mean"), cost.get("difference"), *ci)


def p_text(value: Any) -> str:
    if not finite(value):
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _pair(ci: Any) -> bool:
    return isinstance(ci, (list, tuple)) and len(ci) == 2 and finite(ci[0]) and finite(ci[1])


def significant(p_adjusted: Any) -> bool:
    """Whether a figure is marked: its Holm-adjusted p-value is below 0.05."""
    return finite(p_adjusted) and p_adjusted < ALPHA


def mark(p_adjusted: Any) -> str:
    return MARK if significant(p_adjusted) else ""


def legend(results: Sequence[dict[str, Any]]) -> str:
    """What the mark means in these results (the adjustment is over their candidates)."""
    if len(results) > 1:
        return f"{MARK} p < 0.05 after Holm's adjustment over the {len(results)} candidates"
    return f"{MARK} p < 0.05"


def changed(result: dict[str, Any], changes: str, limit: int | None) -> tuple[list[dict[str, Any]], str]:
    """The changed instances a rendering lists (``--changes``, strongest evidence first) and a
    title for them."""
    every = result.get("instances") or []
    order = "strongest evidence first"
    if changes == "improved":
        picked = [e for e in every if e["difference"] > 0]
        return picked, f"improved instances ({len(picked)}, {order})"
    if changes == "regressed":
        picked = [e for e in every if e["difference"] < 0]
        return picked, f"regressed instances ({len(picked)}, {order})"
    if changes == "beyond-noise":
        picked = [e for e in every if e.get("beyond_noise")]
        return picked, f"instances beyond noise ({len(picked)} of {len(every)} changed, {order})"
    if changes == "all" or limit is None or len(every) <= limit:
        return list(every), f"changed instances ({len(every)}, {order})"
    return list(every[:limit]), (f"changed instances ({limit} of {len(every)}, {order}; "
                                 "--changes all lists every one)")


def evidence_line(result: dict[str, Any]) -> str:
    """The evidence sentence of a comparison's changed instances (''without one)."""
    return str((result.get("evidence") or {}).get("summary") or "")


def floor_line(result: dict[str, Any]) -> str:
    """The noise floor beside the verdict (''without one)."""
    return str((result.get("noise_floor") or {}).get("summary") or "")


def evidence_cells(entry: dict[str, Any]) -> tuple[str, str, str]:
    """An instance's p-value, q-value and its mark (``beyond noise`` or '')."""
    return (p_text(entry.get("p_value")), p_text(entry.get("q_value")),
            "beyond noise" if entry.get("beyond_noise") else "")


def slice_key(key: Any) -> str:
    return "(none)" if key is None else str(key)


SLICE_HEADER = ("jobs", "paired", "difference", "95% CI, adjusted", "p adjusted", "verdict")


def slices_adjustment(result: dict[str, Any]) -> str:
    """How the slices' figures are adjusted, said wherever they are shown."""
    family = sum(1 for s in result.get("slices") or [] if finite(s["paired"].get("p_value")))
    if family <= 1:
        return "one slice with a p-value: nothing to adjust"
    return (f"p-values and verdicts Holm-adjusted, intervals Bonferroni-adjusted (level {1 - ALPHA / family:.2%}) "
            f"over the {family} slices")


def slice_rows(result: dict[str, Any]) -> list[tuple[str, list[str], Any]]:
    """Per slice of ``--by``: its key (raw text: each renderer escapes it), the cells under
    ``SLICE_HEADER`` (numbers formatted; jobs as baseline/candidate; the interval adjusted over
    the slices, as the verdict is), and the adjusted p-value that decides its mark (the
    difference is the third cell)."""
    out = []
    for s in result.get("slices") or []:
        p = s["paired"]
        ci = p.get("ci95_adjusted", p["ci95"])
        out.append((slice_key(s["key"]), [f"{s['baseline_jobs']}/{s['candidate_jobs']}", str(p["instances"]),
                                          points(p["pass_rate_difference"]), points_ci(ci),
                                          p_text(p.get("p_value_adjusted")), str(p["verdict"])],
                    p.get("p_value_adjusted")))
    return out


def clusters_note(result: dict[str, Any]) -> str:
    """``, 8 clusters, effective 3.8 (--cluster '^(.+?)__')`` when the comparison is clustered, else ''."""
    if result.get("cluster") is None:
        return ""
    p = result["paired"]
    effective = p.get("effective_clusters")
    worth = f", effective {effective:.1f}" if finite(effective) else ""
    return f", {p.get('clusters', 0)} clusters{worth} (--cluster {result['cluster']})"


def detectable(p: dict[str, Any]) -> str:
    """What the MDE means, in words: ``differences below ±12.3 pp are detected less than 80% of
    the time`` ('' without one)."""
    if not finite(p.get("mde")):
        return ""
    return f"differences below ±{points(p['mde'], signed=False)} are detected less than 80% of the time"


def equivalence_text(p: dict[str, Any]) -> str:
    """The TOST line of ``--margin`` ('' without one)."""
    margin, tost, ci90 = p.get("margin"), p.get("tost_p"), p.get("ci90")
    if not finite(margin):
        return ""
    if not finite(tost) or not _pair(ci90):
        return f"equivalence within ±{points(margin, signed=False)}: no test (no spread)"
    said = "no change larger than" if p.get("equivalent") else "a change is not ruled out at"
    return (f"equivalence: {said} ±{points(margin, signed=False)} (90% CI {points_ci(ci90)}, "
            f"TOST p {p_text(tost)})")
