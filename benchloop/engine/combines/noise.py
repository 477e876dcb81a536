"""``noise``, ``plan``, ``trend``: what runs of one benchmark say together (``bl noise`` ...).

Each id's value is its flat job rows (step ``job_rows``), gathered by instance as ``bl compare``
gathers them (``benchloop.compare.groups``); a group that cannot take part (no job, a
``--metric`` that scores none) stops the command before anything is printed, as in compare.
``noise`` makes one element, the noise floor (``benchloop.compare.noise``); ``plan`` one, the
plan (``benchloop.compare.plan``) with the runs' within-instance variance (or ``--variance``)
and, with two or more runs and ``--cluster``, their between-run variance; ``trend`` one, the
series (``benchloop.compare.trend``; its rows, one per run, are what csv, jsonl and parquet
print), and with ``--report FILE.html`` its page (``benchloop.compare.trend_report``: a chart
of the runs in their noise band; ``-`` prints it instead).  Each renders ``--output table``
and ``markdown`` themselves (``benchloop.compare.floor_text``), the API key masked in what is
made for people (as ``bl compare`` does).
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ...base.masking import scrub_value
from ..combinecall import CombineCall, Combined, CombineError
from .comparison import _filters
from .registry import combine


def _groups(call: CombineCall) -> list[Any]:
    from ...compare.caveats import problems
    from ...compare.groups import gather

    if not call.values:
        raise CombineError([(call.ids[0] if call.ids else "", "nothing measured: every group failed")])
    groups = [gather(gid, rows) for gid, rows in call.values]
    found = problems(groups, metric=call.options["metric"], unit=call.options["unit"],
                     filters=_filters(call.options))
    if found:
        raise CombineError(found)
    return groups


def _share(name: str, value: Any, low: float = 0.0, high: float = 1.0) -> float:
    number = float(value)
    if not low < number < high:
        raise UsageError(f"--{name.replace('_', '-')} must be between {low:g} and {high:g} (got {value})")
    return number


@combine("noise")
def noise(call: CombineCall) -> Combined:
    from ...compare import floor_text
    from ...compare.estimates import clusterer
    from ...compare.noise import noise_floor

    options = call.options
    groups = _groups(call)
    element = noise_floor(groups, clusterer(options.get("cluster")), int(options["splits"]), int(options["seed"]))
    call.log.note(element["summary"])
    return Combined([element], {"table": lambda: floor_text.noise_table(element),
                                "markdown": lambda: floor_text.noise_markdown(element)})


@combine("plan")
def plan(call: CombineCall) -> Combined:
    from ...compare import floor_text
    from ...compare import plan as planning
    from ...compare.estimates import clusterer
    from ...compare.noise import between_runs, common_keys, within_variance

    options = call.options
    effect = _share("effect", options["effect"], -1.0, 1.0)
    if effect == 0:
        raise UsageError("--effect must not be 0: the difference of pass rate to detect, e.g. 0.02")
    power, alpha = _share("power", options["power"]), _share("alpha", options["alpha"])
    trials = sorted({int(k) for k in options.get("trials") or planning.TRIALS})
    if any(k < 1 for k in trials):
        raise UsageError("--trials must be at least 1")
    groups = _groups(call)
    cluster = clusterer(options.get("cluster"))
    keys = common_keys(groups) if len(groups) > 1 else sorted(groups[0].scored, key=str)
    within = options.get("variance")
    if within is not None:
        within = _share("variance", within, 0.0, 0.25 + 1e-12)
    else:
        within, _ = within_variance(groups, keys if len(groups) > 1 else None)
        if within is None:
            raise CombineError([(groups[0].group_id, "no instance has two trials or more: its within-instance "
                                 "variance is unknown; give it with --variance V (p(1-p) of one trial, 0.25 at most)")])
    between = options.get("between_variance")
    if between is None:
        found = between_runs(groups, keys, cluster) if cluster is not None else None
        between = found["between_variance"] if found else 0.0
    shares: list[float] = []
    if cluster is not None:
        sizes: dict[Any, int] = {}
        for k in keys:
            sizes[cluster(k)] = sizes.get(cluster(k), 0) + 1
        shares = [c / len(keys) for c in sizes.values()]
    instances = options.get("instances")
    first = groups[0].scored
    counts = [(k, sum(first[k].passes), len(first[k].passes)) for k in keys]
    element = planning.plan(within, effect, power, alpha, trials, int(instances or len(keys)),
                            float(options.get("effect_variance") or 0.0), float(between), shares,
                            counts if not instances or int(instances) == len(keys) else ())
    element = {"groups": [g.group_id for g in groups], **element}
    call.log.note(element["summary"])
    return Combined([element], {"table": lambda: floor_text.plan_table(element),
                                "markdown": lambda: floor_text.plan_markdown(element)})


@combine("trend")
def trend(call: CombineCall) -> Combined:
    from ...compare import floor_text, trend_report
    from ...compare import trend as trends
    from ...compare.estimates import clusterer

    alpha = _share("alpha", call.options["alpha"])
    groups = _groups(call)
    if len(groups) < 2:
        raise CombineError([(call.ids[0], "nothing to trend: fewer than two runs remain (the others failed)")])
    element = trends.trend(groups, clusterer(call.options.get("cluster")), alpha)
    call.log.note(element["summary"])
    shared = scrub_value(element, call.secrets)  # for people: the key never in a page or a paste
    renderings = {"table": lambda: floor_text.trend_table(shared),
                  "markdown": lambda: floor_text.trend_markdown(shared)}
    report = call.options.get("report")
    if report == "-":  # the page instead of the series
        return Combined([element], renderings, page=lambda: trend_report.render(shared))
    files = {str(report): lambda: trend_report.generate(shared)} if report else {}
    return Combined([element], renderings, files)
