"""The one override of Cyclopts' help pages: a global option a command shadows is listed once.

Cyclopts lacks this: with the meta app in its ``fallthrough`` parse mode, every page lists
the global options (they are accepted after the action too), also those whose flag the
command declares itself, where the command's own option wins (``config set --api-key``,
a download's ``-o``, ``ap-cmd -q``).  Such a page would list the flag twice, with two
meanings.  This formatter is Cyclopts' :class:`~cyclopts.help.formatters.DefaultFormatter`
(created on the first page, so a command that prints no help imports no rich) that leaves
out of the "Global options" panel every entry sharing a flag with a panel printed before
it on the same page.
"""

from __future__ import annotations

from typing import Any


def _flags(entry: Any) -> set[str]:
    return {*entry.positive_names, *entry.positive_shorts, *entry.negative_names, *entry.negative_shorts}


class OwnOptionsFirst:
    """A ``help_formatter`` (Cyclopts' ``HelpFormatter`` protocol)."""

    def __init__(self, global_panel: str):
        self.global_panel = global_panel
        self._seen: set[str] = set()
        self._default: Any = None

    def _formatter(self) -> Any:
        if self._default is None:
            from cyclopts.help.formatters import DefaultFormatter

            self._default = DefaultFormatter()
        return self._default

    def render_usage(self, console: Any, options: Any, usage: Any) -> None:
        self._seen = set()  # a new page
        self._formatter().render_usage(console, options, usage)

    def render_description(self, console: Any, options: Any, description: Any) -> None:
        self._formatter().render_description(console, options, description)

    def __call__(self, console: Any, options: Any, panel: Any) -> None:
        if panel.title == self.global_panel:
            panel = panel.copy(entries=[e for e in panel.entries if not _flags(e) & self._seen])
        else:
            for entry in panel.entries:
                self._seen |= _flags(entry)
        self._formatter()(console, options, panel)
