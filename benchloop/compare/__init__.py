"""``bl compare`` and ``bl jobs table`` without the network: rows, figures, renderings.

Why a package of its own: the statistics of comparing two benchmark runs (see
``docs/compare.md``) are pure functions of a flat table of jobs, so they are
written, tested and reused (CLI, Python client, MCP tool) apart from how the
jobs were fetched.  Nothing here makes a request or imports the engine; the
package depends on ``benchloop.base`` and jmespath only.

* :mod:`.rows` - one flat row per job from a job-list entry and its metrics
  element, the columns declared as data (:mod:`.scores`: what a number, a
  boolean and a score are);
* :mod:`.stats` - the figures (per instance, per group, paired, costs, slices,
  per instance), on :mod:`.estimates` (a mean with its t interval, with or
  without clusters: CR2 and Bell-McCaffrey df), :mod:`.wildboot` (the wild cluster
  bootstrap of a difference under ``--cluster``) and :mod:`.distributions`
  (Student's t, the noncentral t, the sign test, Holm's adjustment: plain Python);
* :mod:`.caveats` - the warnings, and the problems that stop a comparison;
* :mod:`.verdicts` - the verdict as one sentence;
* :mod:`.terminal`, :mod:`.markdown`, :mod:`.html_report` (with :mod:`.charts`
  and :mod:`.display`) - the readable renderings of a comparison.
"""

from __future__ import annotations

from .rows import job_rows
from .stats import compare_groups

__all__ = ["compare_groups", "job_rows"]
