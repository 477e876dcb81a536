"""Inline SVG charts of a comparison, for the self-contained HTML report.

Why hand-drawn SVG: the report must open anywhere with no network and no
JavaScript, and a few small charts do not justify a plotting library as a
dependency.  Each function returns one chart as plain data (:class:`Chart`: its
size, title and shapes, each a tag with its attributes, text and tooltip); the
report's template draws it (``templates/chart.svg``, autoescaped like the page, so
no text of a chart is markup, whatever it holds) as one ``<svg>`` element with
explicit ``width``/``height`` and a ``viewBox`` (so it has a size before any CSS,
and scales down on a narrow screen) and a ``<title>`` for screen readers;
:func:`drawn` gives that element as text.

Layout rules every chart keeps (the opt-in browser test measures them):

* no two texts overlap: tick labels sit in their own band, the axis title in
  another below it; names go in a legend, never beside points that may coincide;
* a whisker (a 95% CI) is clipped to the plot, and where it was cut a small
  triangle marks it (``polygon.cut``, with the true end in its tooltip);
* a cost axis starts at zero, so 30.57 against 30.62 looks like what it is; a
  cost below zero is the only reason not to, and the axis title then says so.

* :func:`pass_rates` - each group's pass rate as a bar with its 95% CI;
* :func:`paired_changes` - every paired instance's change of pass rate,
  sorted (at most ``MAX_BARS`` bars: above that, evenly spaced ranks of the
  sorted changes, which keeps the shape and the file small);
* :func:`cost_vs_pass` - per cost column, each group's mean cost against its
  pass rate (with its CI), a line from the baseline to the candidate;
* :func:`differences` - one row per slice (``--by``) or cluster (``--cluster``):
  the change of pass rate with its 95% CI where there is one;
* :func:`series` - ``bl trend --report``: each run's pass rate with its CI, the noise
  band of the first run, the runs outside it marked by shape and colour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import display as d

WIDTH = 640
MAX_BARS = 400
COLORS = {"baseline": "#6b7280", "candidate": "#2563eb", "up": "#15803d", "down": "#b91c1c",
          "grid": "#e5e7eb", "axis": "#9ca3af", "text": "#111827", "cut": "#b45309", "band": "#dbeafe"}


def _f(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Shape(NamedTuple):
    """One SVG element of a chart: its tag, attributes (names are ours, values any text), the
    text it holds and its tooltip (a ``<title>`` inside it)."""

    tag: str
    attrs: tuple[tuple[str, str], ...]
    text: str | None = None
    tip: str | None = None


class Chart(NamedTuple):
    width: str
    height: str
    title: str
    css: str
    body: tuple[Shape, ...]


def svg(width: float, height: float, title: str, body: Sequence[Shape], css_class: str) -> Chart:
    return Chart(_f(width), _f(height), title, css_class, tuple(body))


def drawn(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (the template the report draws it with)."""
    from ..base.templating import environment

    return environment("compare").get_template("chart.svg").module.chart(chart)  # type: ignore[attr-defined]


_NARROW, _WIDE = set("ijlft.,:;|!' ()[]-"), set("MWmw@%")


def width_of(content: str, size: float) -> float:
    """A generous estimate of the width of ``content`` in a sans-serif font of ``size`` px."""
    em = sum(0.32 if c in _NARROW else 0.95 if c in _WIDE else 0.72 if c.isupper() else 0.6
             for c in content)
    return em * size * 1.05


def text(x: float, y: float, content: Any, anchor: str = "start", size: int = 12,
         css: str = "", fit: float | None = None) -> Shape:
    """A text; with ``fit`` (pixels), one that would be wider is squeezed to that width
    (``textLength``), so that it never reaches a neighbour or the chart's edge."""
    attrs = [("x", _f(x)), ("y", _f(y)), ("text-anchor", anchor), ("font-size", str(size))]
    if css:
        attrs.append(("class", css))
    if fit is not None and width_of(d.terminal_text(content), size) > fit:
        attrs += [("textLength", _f(fit)), ("lengthAdjust", "spacingAndGlyphs")]
    attrs.append(("fill", COLORS["text"]))
    return Shape("text", tuple(attrs), str(content))


def line(x1: float, y1: float, x2: float, y2: float, color: str, width: float = 1) -> Shape:
    return Shape("line", (("x1", _f(x1)), ("y1", _f(y1)), ("x2", _f(x2)), ("y2", _f(y2)), ("stroke", color),
                          ("stroke-width", _f(width))))


def rect(x: float, y: float, w: float, h: float, color: str, tip: str | None = None,
         css: str = "bar") -> Shape:
    return Shape("rect", (("class", css), ("x", _f(x)), ("y", _f(y)), ("width", _f(max(w, 0))),
                          ("height", _f(max(h, 0))), ("fill", color)), "", tip or None)


def circle(x: float, y: float, r: float, color: str, tip: str | None = None, css: str = "point") -> Shape:
    """A point (with its tooltip), or a legend's dot (no ``css``, no tip: an empty element)."""
    attrs = ((("class", css),) if css else ()) + (("cx", _f(x)), ("cy", _f(y)), ("r", _f(r)), ("fill", color))
    return Shape("circle", attrs, "" if tip else None, tip)


def _clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return min(max(value, low), high)


def cut_mark(x: float, y: float, direction: str, tip: str) -> Shape:
    """A small triangle at a whisker's clipped end, pointing where it goes on."""
    size = 5
    points = {"left": [(x, y), (x + size, y - size), (x + size, y + size)],
              "right": [(x, y), (x - size, y - size), (x - size, y + size)],
              "up": [(x, y), (x - size, y + size), (x + size, y + size)],
              "down": [(x, y), (x - size, y - size), (x + size, y - size)]}[direction]
    shown = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
    return Shape("polygon", (("class", "cut"), ("points", shown), ("fill", COLORS["cut"])), "", tip)


def whisker(low: float, high: float, at: float, lo_limit: float, hi_limit: float, scale: Any,
            horizontal: bool, color: str, tip: str) -> list[Shape]:
    """A CI from ``low`` to ``high`` (data units) across ``at`` (pixels), clipped to
    ``[lo_limit, hi_limit]`` with a :func:`cut_mark` at each clipped end."""
    a, b = scale(_clamp(low, lo_limit, hi_limit)), scale(_clamp(high, lo_limit, hi_limit))
    out: list[Shape] = []
    if horizontal:
        out.append(line(a, at, b, at, color, 1.5))
        for value, end, clipped, way in ((low, a, low < lo_limit, "left"), (high, b, high > hi_limit, "right")):
            out.append(cut_mark(end, at, way, f"{tip}: the interval goes on to {value:.4g}") if clipped
                       else line(end, at - 6, end, at + 6, color, 1.5))
    else:
        out.append(line(at, a, at, b, color, 1.5))
        for value, end, clipped, way in ((low, a, low < lo_limit, "down"), (high, b, high > hi_limit, "up")):
            out.append(cut_mark(at, end, way, f"{tip}: the interval goes on to {value:.4g}") if clipped
                       else line(at - 5, end, at + 5, end, color, 1.5))
    return out


def _short(value: Any, size: int = 22) -> str:
    value = str(value)
    return value if len(value) <= size else value[: size - 1] + "…"


# --------------------------------------------------------------- pass rates
def pass_rates(groups: Sequence[dict[str, Any]], roles: Sequence[str]) -> Chart:
    """Horizontal bars: each group's pass rate, its 95% CI as a whisker (clipped to 0-100%)."""
    left, right, top, row = 170, 70, 12, 36
    plot_bottom = top + row * len(groups)
    height = plot_bottom + 50  # tick labels, then the axis title, each in its own band
    plot = WIDTH - left - right

    def x(v: float) -> float:
        return left + plot * _clamp(v)

    body = []
    for tick in (0, 0.25, 0.5, 0.75, 1):
        body.append(line(x(tick), top, x(tick), plot_bottom, COLORS["grid"]))
        body.append(text(x(tick), plot_bottom + 16, d.rate(tick).replace(".0%", "%"), "middle", 11))
    body.append(text(left + plot / 2, height - 8, "pass rate (mean over instances; whiskers: 95% CI)",
                     "middle", 11, "axis-title"))
    for i, (g, role) in enumerate(zip(groups, roles, strict=True)):
        y = top + i * row + 8
        body.append(text(left - 8, y + 14, _short(g["group_id"], 24), "end", fit=left - 14))
        value = g.get("pass_rate")
        if not d.finite(value):
            body.append(text(left + 4, y + 14, "no scored instances"))  # (short: fits the plot)
            continue
        body.append(rect(left, y, x(value) - left, 20, COLORS[role],
                         f"{g['group_id']}: {d.rate(value)} {d.rate_ci(g.get('pass_rate_ci95'))}"))
        ci = g.get("pass_rate_ci95") or [None, None]
        end = x(value)
        if d.finite(ci[0]) and d.finite(ci[1]):
            body += whisker(ci[0], ci[1], y + 10, 0.0, 1.0, x, True, COLORS["text"], f"{g['group_id']} 95% CI")
            end = x(_clamp(ci[1]))
        body.append(text(min(end + 8, WIDTH - right + 8), y + 14, d.rate(value), size=11))
    return svg(WIDTH, height, "Pass rate of each group with its 95% confidence interval", body,
               "chart-pass-rates")


# ----------------------------------------------------------- paired changes
def paired_changes(changes: Sequence[tuple[str, float]]) -> Chart:
    """Vertical bars: the change of pass rate of each paired instance, largest first.

    ``changes`` are ``(instance, d_i)`` for every paired instance (unchanged
    ones too: they are the flat middle of the profile).
    """
    left, right, top, bottom, height = 52, 12, 12, 30, 220
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    mid = top + plot_h / 2

    def y(v: float) -> float:
        return mid - (plot_h / 2) * _clamp(v, -1, 1)

    body = []
    for tick in (-1, -0.5, 0, 0.5, 1):
        body.append(line(left, y(tick), WIDTH - right, y(tick), COLORS["axis" if tick == 0 else "grid"]))
        body.append(text(left - 6, y(tick) + 4, f"{100 * tick:+.0f}" if tick else "0", "end", 11))
    ordered = sorted(changes, key=lambda c: (-c[1], str(c[0])))
    n = len(ordered)
    if n == 0:
        body.append(text(left + plot_w / 2, mid - 8, "no paired instances", "middle"))
    else:
        count = min(n, MAX_BARS)
        picks = [ordered[round(i * (n - 1) / (count - 1))] if count > 1 else ordered[0]
                 for i in range(count)]
        width = plot_w / count
        gap = 0.15 * width if width > 3 else 0
        for i, (name, change) in enumerate(picks):
            if change == 0:
                continue
            top_y, bar_h = (y(change), mid - y(change)) if change > 0 else (mid, y(change) - mid)
            tip = f"{name}: {d.points(change)}" if n <= MAX_BARS else f"{d.points(change)}"
            body.append(rect(left + i * width + gap / 2, top_y, width - gap, bar_h,
                             COLORS["up" if change > 0 else "down"], tip))
    body.append(text(left + plot_w / 2, height - 8,
                     f"{n} paired instances, sorted by change of pass rate (pp)", "middle", 11, "axis-title"))
    return svg(WIDTH, height, "Change of pass rate per paired instance (candidate minus baseline)",
               body, "chart-paired-changes")


# ------------------------------------------------------------ cost vs pass
def _nice_top(value: float) -> float:
    """The round number at or above ``value`` an axis ends at (1, 2, 2.5 or 5 times a power of 10)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def cost_vs_pass(name: str, cost: dict[str, Any], groups: Sequence[dict[str, Any]]) -> Chart:
    """One panel: mean cost (x, from zero) against pass rate (y) of baseline and candidate."""
    width, height, left, right, top, bottom = 320, 250, 56, 18, 30, 52
    plot_w, plot_h = width - left - right, height - top - bottom
    given = [cost.get("baseline_mean"), cost.get("candidate_mean"), *(g.get("pass_rate") for g in groups[:2])]
    numbers = [v for v in given if d.finite(v)]
    body = []
    title = f"Mean {name} per instance against pass rate"
    if len(numbers) != 4:
        body.append(text(width / 2, height / 2, "no data", "middle"))
        body.append(text(width / 2, height - 8, _short(name, 40), "middle", 11, "axis-title", fit=width - 8))
        return svg(width, height, title, body, "chart-cost")
    xs, ys = numbers[:2], numbers[2:]
    cis = [g.get("pass_rate_ci95") or [g["pass_rate"], g["pass_rate"]] for g in groups[:2]]
    y_lo = _clamp(min(min(c) for c in cis) - 0.05)
    y_hi = _clamp(max(max(c) for c in cis) + 0.05)
    if y_hi - y_lo < 0.1:
        y_lo, y_hi = _clamp(y_lo - 0.05), _clamp(y_hi + 0.05)
    from_zero = min(xs) >= 0
    if from_zero:
        x_lo, x_hi = 0.0, _nice_top(max(xs) * 1.05)
    else:  # a negative mean cost: the axis cannot start at zero, and says so
        pad = (max(xs) - min(xs)) * 0.25 or abs(max(xs)) * 0.1 or 1.0
        x_lo, x_hi = min(xs) - pad, max(xs) + pad

    def px(v: float) -> float:
        return left + plot_w * (v - x_lo) / (x_hi - x_lo)

    def py(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo))

    base_y = top + plot_h
    body += [line(left, top, left, base_y, COLORS["axis"]), line(left, base_y, left + plot_w, base_y, COLORS["axis"]),
             text(4, 12, "pass rate", size=10, css="axis-title"),
             text(left - 6, py(y_hi) + 4, d.rate(y_hi), "end", 10),
             text(left - 6, py(y_lo), d.rate(y_lo), "end", 10)]
    ticks = (x_lo, (x_lo + x_hi) / 2, x_hi)
    for i, tick in enumerate(ticks):
        anchor = ("start", "middle", "end")[i]
        body.append(line(px(tick), base_y, px(tick), base_y + 4, COLORS["axis"]))
        body.append(text(px(tick), base_y + 16, d.number(tick, scale=x_hi), anchor, 10))
    axis = f"mean {_short(name, 26)} per instance" + ("" if from_zero else " (axis not from 0)")
    body.append(text(width / 2, height - 8, axis, "middle", 11, "axis-title", fit=width - 8))
    body.append(line(px(xs[0]), py(ys[0]), px(xs[1]), py(ys[1]), COLORS["axis"], 1.5))
    for x, yv, ci, g, role in zip(xs, ys, cis, groups[:2], ("baseline", "candidate"), strict=True):
        body += whisker(ci[0], ci[1], px(x), y_lo, y_hi, py, False, COLORS[role], f"{g['group_id']} 95% CI")
        body.append(circle(px(x), py(yv), 5, COLORS[role],
                           f"{g['group_id']}: {name} {d.number(x)}, pass rate {d.rate(yv)}"))
    # The names in a legend (points may coincide; labels beside them would overlap).
    for i, (g, role) in enumerate(zip(groups[:2], ("baseline", "candidate"), strict=True)):
        lx = width - right - 110 + i * 58
        body.append(circle(lx, 8, 4, COLORS[role], css=""))
        body.append(text(lx + 7, 12, _short(g["group_id"], 9), size=10, css="legend", fit=46))
    return svg(width, height, title, body, "chart-cost")


# ------------------------------------------------------------- differences
def differences(rows: Sequence[tuple[str, float | None, Any]], what: str) -> Chart:
    """A forest plot: per row ``(label, difference, ci95 or None)`` the change of pass rate
    (points in pp, -100 to +100), its CI as a clipped whisker when there is one."""
    left, right, top, row = 190, 76, 12, 24
    plot_bottom = top + row * max(len(rows), 1)
    height = plot_bottom + 50
    plot = WIDTH - left - right

    def x(v: float) -> float:
        return left + plot * (_clamp(v, -1, 1) + 1) / 2

    body = []
    for tick in (-1, -0.5, 0, 0.5, 1):
        body.append(line(x(tick), top, x(tick), plot_bottom, COLORS["axis" if tick == 0 else "grid"]))
        body.append(text(x(tick), plot_bottom + 16, f"{100 * tick:+.0f}" if tick else "0", "middle", 11))
    whiskers = any(isinstance(ci, (list, tuple)) for _, _, ci in rows)
    body.append(text(left + plot / 2, height - 8, f"change of pass rate per {what} (pp"
                     + ("; whiskers: 95% CI)" if whiskers else ")"), "middle", 11, "axis-title"))
    if not rows:
        body.append(text(left + plot / 2, top + 16, "nothing to show", "middle"))
    for i, (label, diff, ci) in enumerate(rows):
        y = top + i * row + row / 2
        body.append(text(left - 8, y + 4, _short(label, 30), "end", 11, fit=left - 14))
        if not d.finite(diff):
            body.append(text(x(0) + 6, y + 4, "no paired instance", size=11))
            continue
        color = COLORS["up" if diff > 0 else "down" if diff < 0 else "axis"]
        if isinstance(ci, (list, tuple)) and len(ci) == 2 and d.finite(ci[0]) and d.finite(ci[1]):
            body += whisker(ci[0], ci[1], y, -1.0, 1.0, x, True, COLORS["text"], f"{label} 95% CI")
        body.append(circle(x(diff), y, 5, color, f"{label}: {d.points(diff)}"))
        body.append(text(WIDTH - 4, y + 4, d.points(diff), "end", 11))
    return svg(WIDTH, height, f"Change of pass rate per {what}", body, f"chart-{what}s")


# ------------------------------------------------------------------ series
def _diamond(x: float, y: float, r: float, color: str, tip: str) -> Shape:
    """A flagged run's mark: a diamond, so that it differs from a point by its shape as well as
    its colour (read in grey, printed, by a colour-blind reader)."""
    shown = " ".join(f"{_f(px)},{_f(py)}" for px, py in ((x, y - r), (x + r, y), (x, y + r), (x - r, y)))
    return Shape("polygon", (("class", "point flagged"), ("points", shown), ("fill", color)), "", tip)


def _ticks(low: float, high: float) -> list[float]:
    """Round pass rates between ``low`` and ``high`` (a step of 1, 2, 5, 10, 20 or 25 pp: 3 to 7 ticks)."""
    for step in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25):
        first = math.ceil(low / step - 1e-9) * step
        ticks = [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]
        if len(ticks) <= 7:
            return ticks
    return [low, high]


def series(runs: Sequence[dict[str, Any]]) -> Chart:
    """A run chart of ``bl trend``: per run (x: its place in the series) its pass rate over the
    common instances with its 95% CI (a whisker, clipped to the plot with a cut mark), the noise
    band around the first run's pass rate (its control limits, one shaded slot per later run) and
    a dashed line at the first run's rate; a run outside its band is a red diamond, the others
    blue points (the first, the reference, grey).  The runs are named under the axis (squeezed to
    their slot), numbered when there are too many for names; every mark's tooltip names its run."""
    left, right, top, bottom = 56, 16, 34, 58
    count = max(len(runs), 1)
    slot = (WIDTH - left - right) / count
    height = 280
    plot_h = height - top - bottom
    base_y = top + plot_h
    reference = runs[0] if runs else {}
    ref_rate = reference.get("pass_rate")
    values: list[float] = []
    for r in runs:
        values += [v for v in (r.get("pass_rate"), *(r.get("pass_rate_ci95") or ())) if d.finite(v)]
        if d.finite(ref_rate) and d.finite(r.get("limit")):
            values += [ref_rate - r["limit"], ref_rate + r["limit"]]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    low, high = _clamp(low - 0.03), _clamp(high + 0.03)
    if high - low < 0.1:
        low, high = _clamp(low - 0.05), _clamp(high + 0.05)

    def y(v: float) -> float:
        return base_y - plot_h * (_clamp(v, low, high) - low) / (high - low)

    def x(i: int) -> float:
        return left + slot * (i + 0.5)

    body: list[Shape] = []
    for tick in _ticks(low, high):
        body.append(line(left, y(tick), WIDTH - right, y(tick), COLORS["grid"]))
        body.append(text(left - 6, y(tick) + 4, d.rate(tick).replace(".0%", "%"), "end", 11))
    body.append(text(4, 12, "pass rate (common instances; whiskers: 95% CI)", size=11, css="axis-title"))
    # The legend, top right: what the shapes and the band are.
    lx = WIDTH - right - 262
    body += [Shape("rect", (("class", "swatch"), ("x", _f(lx)), ("y", "4"), ("width", "14"), ("height", "10"),
                            ("fill", COLORS["band"]))),
             text(lx + 18, 13, "noise band", size=10, css="legend"),
             circle(lx + 98, 9, 4, COLORS["candidate"], css=""),
             text(lx + 106, 13, "inside", size=10, css="legend"),
             Shape("polygon", (("points", f"{_f(lx + 160)},3 {_f(lx + 166)},9 {_f(lx + 160)},15 {_f(lx + 154)},9"),
                               ("fill", COLORS["down"]))),
             text(lx + 170, 13, "outside the band", size=10, css="legend")]
    if d.finite(ref_rate):
        for i, r in enumerate(runs):
            limit = r.get("limit")
            if i and d.finite(limit):
                top_y, bottom_y = y(ref_rate + limit), y(ref_rate - limit)
                body.append(rect(x(i) - slot / 2 + 1, top_y, slot - 2, bottom_y - top_y, COLORS["band"],
                                 f"{r['group_id']}: noise band {d.rate(ref_rate - limit)} to "
                                 f"{d.rate(ref_rate + limit)} (first run ±{d.points(limit, False)})", "band"))
        dash = line(left, y(ref_rate), WIDTH - right, y(ref_rate), COLORS["axis"])
        body.append(Shape(dash.tag, (*dash.attrs, ("stroke-dasharray", "4 3"))))
    body.append(line(left, base_y, WIDTH - right, base_y, COLORS["axis"]))
    numbered = slot < 44
    for i, r in enumerate(runs):
        name = str(r["group_id"])
        label = str(i + 1) if numbered else _short(name, 16)
        body.append(text(x(i), base_y + 16, label, "middle", 11, fit=None if numbered else slot - 6))
        value = r.get("pass_rate")
        if not d.finite(value):
            body.append(text(x(i), top + plot_h / 2, "n/a", "middle", 11))
            continue
        ci = r.get("pass_rate_ci95") or [None, None]
        tip = f"{name}: {d.rate(value)} {d.rate_ci(ci)}"
        if d.finite(ci[0]) and d.finite(ci[1]):
            body += whisker(ci[0], ci[1], x(i), low, high, y, False, COLORS["text"], f"{name} 95% CI")
        ref = r.get("reference") or {}
        if r.get("flagged"):
            body.append(_diamond(x(i), y(value), 7, COLORS["down"],
                                 f"{tip}: outside the noise band ({d.points(ref.get('difference'))} vs the first run)"))
        else:
            role = "baseline" if i == 0 else "candidate"
            body.append(circle(x(i), y(value), 5, COLORS[role], tip + (" (the first run: the reference)" if i == 0
                                                                       else "")))
    axis = ("runs, numbered in the order given (the table names them)" if numbered
            else "runs in the order given (the first is the reference)")
    body.append(text(left + (WIDTH - left - right) / 2, height - 8, axis, "middle", 11, "axis-title"))
    return svg(WIDTH, height, "Pass rate of each run with its 95% CI and the noise band of the first run", body,
               "chart-trend")
