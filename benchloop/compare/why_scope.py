"""Which changed instances ``bl compare --why`` looked at (:class:`Scope`), and how a
divergence summary says it: pure, shared by the terminal and markdown lines of
``viewer.divergences`` and the HTML report (``html_report``), which may not import viewer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .evidence import percent


@dataclass(frozen=True)
class Scope:
    """Which changed instances ``--why`` looked at: those beyond noise at ``fdr`` among the
    ``picked`` that ``--changes`` picks, or (``every``: ``--why-all``) all of them.  When none
    of the picked is beyond noise (with a few trials per instance none can be), ``--why``
    looks at all of them too rather than at nothing (``fallback``), and says so."""

    every: bool = True
    fallback: bool = False  # --why: none was beyond noise, so every picked instance was looked at
    fdr: float = 0.1
    changes: str = "all"  # --changes: improved and regressed pick a direction
    picked: int = 0  # changed instances --changes picks
    looked_at: int = 0  # those looked at

    @property
    def word(self) -> str:
        return self.changes if self.changes in ("improved", "regressed") else "changed"

    def note(self) -> str | None:
        """What was not looked at and how to, when nothing was (None otherwise)."""
        if self.fallback:
            return (f"no {self.word} instance is beyond noise at FDR {percent(self.fdr)}, so all "
                    f"{self.picked} {self.word} are looked at (as --why-all): with so few trials most "
                    f"of them are noise, and a kind shared by many of them says more than any one")
        if self.looked_at:
            return None
        if not self.picked:
            return f"no {self.word} instance: nothing to look at"
        if self.every:
            return None
        return (f"no {self.word} instance is beyond noise at FDR {percent(self.fdr)}; "
                f"--why-all looks at all {self.picked} {self.word}")

    def title(self) -> str:
        """How the instances looked at were chosen, for a summary's title."""
        if self.every:
            return f"of each {self.word} instance (--why-all): {self.picked}"
        if self.fallback:
            return (f"of each {self.word} instance: none is beyond noise at FDR {percent(self.fdr)}, "
                    f"so all {self.picked}")
        return (f"of each {self.word} instance beyond noise at FDR {percent(self.fdr)}: {self.looked_at} of "
                f"{self.picked}; --why-all looks at all")

    def fields(self) -> dict[str, Any]:
        return {"picked": "all" if self.every or self.fallback else "beyond-noise", "fallback": self.fallback,
                "fdr": self.fdr, "changes": self.changes, "changed": self.picked,
                "looked_at": self.looked_at, "note": self.note()}


def scope_of(summary: dict[str, Any]) -> Scope:
    """The :class:`Scope` a divergence summary says it was made over."""
    fallback = bool(summary.get("fallback"))
    return Scope(every=summary.get("picked") != "beyond-noise" and not fallback, fallback=fallback,
                 fdr=float(summary.get("fdr") or 0.1),
                 changes=str(summary.get("changes") or "all"), picked=int(summary.get("changed") or 0),
                 looked_at=int(summary.get("looked_at") or 0))
