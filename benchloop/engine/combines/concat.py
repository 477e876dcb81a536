"""``concat``: every id's list of rows, one flat array in the order of the ids.

``bl jobs table -g G1,G2`` prints one row per job, the rows of G1 then those of G2,
as one table (and ``--output csv`` one header row), not one array per group.
"""

from __future__ import annotations

from ..combinecall import CombineCall, Combined
from .registry import combine


@combine("concat")
def concat(call: CombineCall) -> Combined:
    rows = []
    for _ident, value in call.values:
        if isinstance(value, list):
            rows.extend(value)
        else:
            rows.append(value)
    return Combined(rows)
