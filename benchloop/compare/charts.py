"""Inline SVG charts of a comparison, for the self-contained HTML report.

Why hand-written SVG: the report must open anywhere with no network and no
JavaScript, and three small charts do not justify a plotting library as a
dependency.  Each function returns one ``<svg>`` element with explicit
``width``/``height`` and a ``viewBox`` (so it has a size before any CSS, and
scales down on a narrow screen), a ``<title>`` for screen readers, and every
text escaped with :func:`display.html_text`.

* :func:`pass_rates` - each group's pass rate as a bar with its 95% CI;
* :func:`paired_changes` - every paired instance's change of pass rate,
  sorted (at most ``MAX_BARS`` bars: above that, evenly spaced ranks of the
  sorted changes, which keeps the shape and the file small);
* :func:`cost_vs_pass` - per cost column, each group's mean cost against its
  pass rate (with its CI), an arrow from the baseline to the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import display as d

WIDTH = 640
MAX_BARS = 400
COLORS = {"baseline": "#6b7280", "candidate": "#2563eb", "up": "#15803d", "down": "#b91c1c",
          "grid": "#e5e7eb", "axis": "#9ca3af", "text": "#111827"}


def _f(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def svg(width: float, height: float, title: str, body: Sequence[str], css_class: str) -> str:
    return (f'<svg class="{css_class}" width="{_f(width)}" height="{_f(height)}" '
            f'viewBox="0 0 {_f(width)} {_f(height)}" role="img" aria-label="{d.html_text(title)}">'
            f"<title>{d.html_text(title)}</title>" + "".join(body) + "</svg>")


def text(x: float, y: float, content: Any, anchor: str = "start", size: int = 12,
         css: str = "") -> str:
    klass = f' class="{css}"' if css else ""
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}" font-size="{size}"{klass} '
            f'fill="{COLORS["text"]}">{d.html_text(content)}</text>')


def line(x1: float, y1: float, x2: float, y2: float, color: str, width: float = 1) -> str:
    return (f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" stroke="{color}" '
            f'stroke-width="{_f(width)}"/>')


def rect(x: float, y: float, w: float, h: float, color: str, tip: str | None = None,
         css: str = "bar") -> str:
    inner = f"<title>{d.html_text(tip)}</title>" if tip else ""
    return (f'<rect class="{css}" x="{_f(x)}" y="{_f(y)}" width="{_f(max(w, 0))}" '
            f'height="{_f(max(h, 0))}" fill="{color}">{inner}</rect>')


def _clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return min(max(value, low), high)


# --------------------------------------------------------------- pass rates
def pass_rates(groups: Sequence[dict[str, Any]], roles: Sequence[str]) -> str:
    """Horizontal bars: each group's pass rate, its 95% CI as a whisker."""
    left, right, top, row = 150, 90, 12, 36
    height = top + row * len(groups) + 30
    plot = WIDTH - left - right

    def x(v: float) -> float:
        return left + plot * _clamp(v)

    body = []
    for tick in (0, 0.25, 0.5, 0.75, 1):
        body.append(line(x(tick), top, x(tick), height - 24, COLORS["grid"]))
        body.append(text(x(tick), height - 8, d.rate(tick).replace(".0%", "%"), "middle", 11))
    for i, (g, role) in enumerate(zip(groups, roles, strict=True)):
        y = top + i * row + 8
        body.append(text(left - 8, y + 14, _short(g["group_id"]), "end"))
        value = g.get("pass_rate")
        if not d.finite(value):
            body.append(text(left + 4, y + 14, "no scored instances"))
            continue
        body.append(rect(left, y, x(value) - left, 20, COLORS[role],
                         f"{g['group_id']}: {d.rate(value)} {d.rate_ci(g.get('pass_rate_ci95'))}"))
        ci = g.get("pass_rate_ci95") or [None, None]
        end = x(value)
        if d.finite(ci[0]) and d.finite(ci[1]):
            lo, hi = x(ci[0]), x(ci[1])
            body += [line(lo, y + 10, hi, y + 10, COLORS["text"], 1.5),
                     line(lo, y + 4, lo, y + 16, COLORS["text"], 1.5),
                     line(hi, y + 4, hi, y + 16, COLORS["text"], 1.5)]
            end = hi
        body.append(text(end + 6, y + 14, d.rate(value), size=11))
    return svg(WIDTH, height, "Pass rate of each group with its 95% confidence interval", body,
               "chart-pass-rates")


def _short(value: Any, size: int = 22) -> str:
    value = str(value)
    return value if len(value) <= size else value[: size - 1] + "…"


# ----------------------------------------------------------- paired changes
def paired_changes(changes: Sequence[tuple[str, float]]) -> str:
    """Vertical bars: the change of pass rate of each paired instance, largest first.

    ``changes`` are ``(instance, d_i)`` for every paired instance (unchanged
    ones too: they are the flat middle of the profile).
    """
    left, right, top, bottom, height = 48, 12, 12, 28, 220
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
                     f"{n} paired instances, sorted by change of pass rate (pp)", "middle", 11))
    return svg(WIDTH, height, "Change of pass rate per paired instance (candidate minus baseline)",
               body, "chart-paired-changes")


# ------------------------------------------------------------ cost vs pass
def cost_vs_pass(name: str, cost: dict[str, Any], groups: Sequence[dict[str, Any]]) -> str:
    """One panel: mean cost (x) against pass rate (y) of baseline and candidate."""
    width, height, left, right, top, bottom = 300, 220, 52, 16, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    given = [cost.get("baseline_mean"), cost.get("candidate_mean"), *(g.get("pass_rate") for g in groups[:2])]
    numbers = [v for v in given if d.finite(v)]
    body = []
    title = f"Mean {name} per instance against pass rate"
    if len(numbers) != 4:
        body.append(text(width / 2, height / 2, "no data", "middle"))
        body.append(text(width / 2, height - 8, name, "middle", 11))
        return svg(width, height, title, body, "chart-cost")
    xs, ys = numbers[:2], numbers[2:]
    cis = [g.get("pass_rate_ci95") or [g["pass_rate"], g["pass_rate"]] for g in groups[:2]]
    y_lo = _clamp(min(min(c) for c in cis) - 0.05)
    y_hi = _clamp(max(max(c) for c in cis) + 0.05)
    if y_hi - y_lo < 0.1:
        y_lo, y_hi = _clamp(y_lo - 0.05), _clamp(y_hi + 0.05)
    x_lo, x_hi = min(xs), max(xs)
    pad = (x_hi - x_lo) * 0.25 or abs(x_hi) * 0.1 or 1.0
    x_lo, x_hi = x_lo - pad, x_hi + pad

    def px(v: float) -> float:
        return left + plot_w * (v - x_lo) / (x_hi - x_lo)

    def py(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo))

    body += [line(left, top, left, top + plot_h, COLORS["axis"]),
             line(left, top + plot_h, left + plot_w, top + plot_h, COLORS["axis"]),
             text(left - 6, py(y_hi) + 4, d.rate(y_hi), "end", 10),
             text(left - 6, py(y_lo), d.rate(y_lo), "end", 10),
             text(px(xs[0]), top + plot_h + 14, d.number(xs[0]), "middle", 10),
             text(width / 2, height - 6, f"mean {_short(name, 30)} per instance", "middle", 11)]
    if xs[1] != xs[0]:
        body.append(text(px(xs[1]), top + plot_h + 26, d.number(xs[1]), "middle", 10))
    body.append(line(px(xs[0]), py(ys[0]), px(xs[1]), py(ys[1]), COLORS["axis"], 1.5))
    for x, yv, ci, g, role in zip(xs, ys, cis, groups[:2], ("baseline", "candidate"), strict=True):
        body.append(line(px(x), py(ci[0]), px(x), py(ci[1]), COLORS[role], 1.5))
        body.append(f'<circle class="point" cx="{_f(px(x))}" cy="{_f(py(yv))}" r="5" '
                    f'fill="{COLORS[role]}"><title>{d.html_text(g["group_id"])}: {d.html_text(name)} '
                    f'{d.number(x)}, pass rate {d.rate(yv)}</title></circle>')
        right_half = px(x) > left + plot_w * 0.6
        body.append(text(px(x) + (-8 if right_half else 8), py(yv) - 6, _short(g["group_id"], 14),
                         "end" if right_half else "start", 11))
    return svg(width, height, title, body, "chart-cost")
