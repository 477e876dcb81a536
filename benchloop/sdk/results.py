"""What a download method returns."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DownloadResult:
    """The files of one download call.

    ``paths``: every file written, in the order they were completed (the
    ``wrote``/``downloaded`` lines of the CLI); ``skipped``: files left alone by
    ``skip_existing=True``; ``failures``: ``(id, message)`` pairs;
    ``placeholders``: the files of ``paths`` that are a placeholder, not the
    object (a missing artifact's empty ``.tar.gz``).  A call that returns has no
    failures: when some ids fail, ``PartialFailure`` is raised and its
    ``results`` is this object, failures included.
    """

    paths: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures
