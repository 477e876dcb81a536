"""Which changed instances are beyond noise: an exact test per instance, and what an A/A lists.

Why: a benchmark with a few trials per instance lists many instances as "changed" between two
runs of the *same* system (with 2 trials against 2, an instance that passes half the time
changes more often than not).  A list of changed instances is only useful with two things
beside it: the evidence of each change (here Fisher's exact test on the instance's trial
counts, ``passes/trials`` in each run) with the false discovery rate controlled across the
instances (Benjamini & Hochberg 1995), and how many instances an A/A comparison of these
instances would list as changed anyway.

* :func:`fisher_exact` - the two-sided p-value of a 2x2 table, as scipy's ``fisher_exact``
  defines it (the tables no more likely than the one observed, with its relative tolerance),
  computed exactly in integers;
* :func:`smallest_p` - the smallest p-value a pair of trial counts can give at all (2 trials
  against 2: 1/3; 4 against 4: 2/70): with too few trials no instance can be a discovery;
* :func:`benjamini_hochberg` - the BH adjusted p-values (q-values) of a family;
* :func:`changed_under_null` - the chance that an instance is listed as changed when its
  pooled trials are dealt at random into the two runs (the null of Fisher's test): summed over
  the instances, it is the count an A/A comparison of these instances lists on average.

The family of the FDR is every paired instance (an unchanged one has p = 1 and is never a
discovery, but it is one of the hypotheses): fixed before the data are looked at.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

FDR = 0.1  # the default level of --fdr
_TOLERANCE = 10**7  # scipy's relative tolerance 1e-7 on "no more likely", in integers


def _weights(n1: int, n2: int, passes: int) -> list[tuple[int, int]]:
    """``(x, C(n1, x) C(n2, passes - x))`` for every split of ``passes`` into the two rows."""
    low, high = max(0, passes - n2), min(n1, passes)
    return [(x, math.comb(n1, x) * math.comb(n2, passes - x)) for x in range(low, high + 1)]


@lru_cache(maxsize=65536)
def fisher_exact(a: int, n1: int, b: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test of ``a`` passes in ``n1`` trials against ``b``
    in ``n2``: the probability, given the total passes, of every split no more likely than the
    one observed (hypergeometric)."""
    if not (0 <= a <= n1 and 0 <= b <= n2):
        raise ValueError("passes must be between 0 and the trials")
    if n1 == 0 or n2 == 0:
        return 1.0
    weights = _weights(n1, n2, a + b)
    observed = math.comb(n1, a) * math.comb(n2, b)
    tail = sum(w for _, w in weights if w * _TOLERANCE <= observed * (_TOLERANCE + 1))
    return min(1.0, tail / math.comb(n1 + n2, a + b))


@lru_cache(maxsize=4096)
def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided Fisher p-value any outcome of ``n1`` against ``n2`` trials gives."""
    if n1 == 0 or n2 == 0:
        return 1.0
    return min(fisher_exact(a, n1, b, n2) for a in range(n1 + 1) for b in range(n2 + 1))


def trials_to_reach(level: float, limit: int = 64) -> int | None:
    """The fewest trials per instance in each run (equal) with which an instance that passes
    every trial in one run and none in the other has a p-value at most ``level``."""
    for k in range(1, limit + 1):
        if 2 / math.comb(2 * k, k) <= level:
            return k
    return None


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """The Benjamini-Hochberg adjusted p-values: sorted ``p_(1) <= ... <= p_(m)``,
    ``q_(i) = min over j >= i of min(1, m p_(j) / j)``; rejecting ``q <= level`` keeps the
    expected share of false discoveries at ``level`` (independent or positively dependent
    tests)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, m * p_values[i] / rank)
        out[i] = min(1.0, running)
    return out


@lru_cache(maxsize=65536)
def changed_under_null(passes: int, n1: int, n2: int) -> float:
    """The chance that ``passes`` of ``n1 + n2`` pooled trials, dealt at random into ``n1`` and
    ``n2``, give the two runs different pass rates.  It is also the unbiased estimate, from
    ``passes`` in ``n1 + n2`` trials of one system, of the chance that two runs of it with
    ``n1`` and ``n2`` trials differ on the instance."""
    if n1 == 0 or n2 == 0:
        return 0.0
    same = sum(w for x, w in _weights(n1, n2, passes) if x * n2 == (passes - x) * n1)
    return 1.0 - same / math.comb(n1 + n2, passes)


def percent(level: float) -> str:
    return f"{100 * level:g}%"


def assess(pairs: Sequence[tuple[str, int, int, int, int]], level: float = FDR,
           changed_only: bool = False) -> dict[str, Any]:
    """The evidence of a comparison's paired instances: ``pairs`` are ``(instance, passes,
    trials)`` of the baseline then of the candidate, one per paired instance.

    Returns ``{"per_instance": {instance: {p_value, q_value, beyond_noise, smallest_p,
    null_changed}}, "summary": {...}}`` (see ``docs/compare.md``, "Changes beyond noise");
    ``changed_only``: ``per_instance`` holds the changed instances only (the summary is the
    same: ``bl compare`` of 10^6-job runs keeps no record of the unchanged ones)."""
    p_values = [fisher_exact(a, n1, b, n2) for _, a, n1, b, n2 in pairs]
    q_values = benjamini_hochberg(p_values)
    per: dict[str, dict[str, Any]] = {}
    changed = beyond = reachable = 0
    expected = 0.0
    lowest_all = 1.0
    for (key, a, n1, b, n2), p, q in zip(pairs, p_values, q_values, strict=True):
        moved = a * n2 != b * n1
        changed += moved
        lowest = smallest_p(n1, n2)
        reachable += lowest <= level
        null = changed_under_null(a + b, n1, n2)
        expected += null
        flagged = moved and q <= level
        beyond += flagged
        lowest_all = min(lowest_all, lowest)
        if moved or not changed_only:
            per[key] = {"p_value": p, "q_value": q, "beyond_noise": flagged, "smallest_p": lowest,
                        "null_changed": null}
    m = len(pairs)
    needed = None if reachable else trials_to_reach(level / max(m, 1))
    summary = {
        "test": "fisher", "fdr": level, "instances": m, "changed": changed,
        "aa_expected": expected, "aa_share": expected / m if m else None,
        "beyond_noise": beyond, "reachable": reachable, "smallest_p": lowest_all if m else None,
        "trials_needed": needed,
    }
    summary["summary"] = sentence(summary)
    return {"per_instance": per, "summary": summary}


def sentence(s: dict[str, Any]) -> str:
    """``29 changed; an A/A comparison lists about 15 of 36; 1 beyond noise at FDR 10%``, and
    when no instance can be a discovery with these trial counts, what would make one."""
    m = s["instances"]
    if not m:
        return "no paired instance: nothing to test"
    text = (f"{s['changed']} changed; an A/A comparison lists about {s['aa_expected']:.0f} of {m}; "
            f"{s['beyond_noise']} beyond noise at FDR {percent(s['fdr'])}")
    if not s["reachable"]:
        text += (f" (no instance can reach it with these trial counts: the smallest p-value they allow "
                 f"is {s['smallest_p']:.3g}")
        needed = s.get("trials_needed")
        text += (f"; {needed} trials per instance in each run would let one that flips completely stand "
                 f"out among {m})" if needed else ")")
    return text
