"""``bl compare`` and ``bl jobs table`` without the network: rows, figures, renderings.

Why a package of its own: the statistics of comparing two benchmark runs (see
``docs/compare.md``) are pure functions of a flat table of jobs, so they are
written, tested and reused (CLI, Python client, MCP tool) apart from how the
jobs were fetched.  Nothing here makes a request or imports the engine; the
package depends on ``benchloop.base`` and jmespath only.

* :mod:`.rows` - one flat row per job from a job-list entry and its metrics
  element, the columns declared as data;
* :mod:`.stats` - the figures (per instance, per group, paired, costs);
* :mod:`.terminal`, :mod:`.markdown`, :mod:`.html_report` (with :mod:`.charts`)
  - the readable renderings of a comparison.
"""

from __future__ import annotations

from .rows import job_rows
from .stats import compare_groups

__all__ = ["compare_groups", "job_rows"]
