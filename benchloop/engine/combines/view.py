"""``view``: the page of one trial, or of two side by side (``bl view``).

Each id's value is one trial (step ``trial``: the job, its trajectory, its report, its
metrics, its images).  With ``--output html`` (the default) the combine writes one
self-contained page (:mod:`benchloop.viewer.page`) - to ``-o FILE`` (``page.html``: a name
with an extension, or an existing file), or under ``-o DIR`` (``DIR/``, an existing
directory, or a new name without an extension; made when missing) or else the output
directory, by a name made of the ids - piece by piece, and
``--open`` opens it in the browser; ``-o -`` prints it instead.  Any other ``--output``
prints the trials' step rows instead of writing a page (:mod:`benchloop.viewer.listing`):
``text`` is a readable listing of its own, the others are the generic formats (and
``--query``) over one element per trial.  When two trials are given and one failed, the
page shows the one that worked (the failure is in the summary and the exit code).
"""

from __future__ import annotations

import os
from typing import Any

from ...base.files import safe_component
from ..combinecall import CombineCall, Combined
from .registry import combine


def page_name(trials: list[dict[str, Any]]) -> str:
    """The default file name: ``JOB_view.html``, ``A_vs_B_view.html``, or in ``--instance``
    mode ``INSTANCE_BASE_vs_CAND_view.html`` (each part a safe file-name component)."""
    if trials and all(t.get("instance") and t.get("group") for t in trials):
        parts = [str(trials[0]["instance"]), "_vs_".join(str(t["group"]) for t in trials)]
    else:
        parts = ["_vs_".join(str(t.get("job_id")) for t in trials)]
    return safe_component("_".join(parts) + "_view.html")


def page_path(given: str | None, root: str, trials: list[dict[str, Any]]) -> str:
    """Where the page goes: ``-o FILE`` as given; ``-o DIR`` (or the output root) with the
    default name.  Which one ``-o`` names was decided once, when the arguments were checked
    (``arguments.names_directory``: ``DIR/``, an existing directory, a new name without an
    extension), and a directory came back ending with a separator."""
    if given and not given.endswith(("/", os.sep)):
        return given
    return os.path.join(given or root, page_name(trials))


@combine("view")
def view(call: CombineCall) -> Combined:
    from ...viewer import listing, page
    from ...viewer.trajectory import align, first_difference, read

    trials = [value for _, value in call.values if isinstance(value, dict)]
    if not trials:
        return Combined([])
    options, secrets = call.options, call.secrets
    output = options.get("output") or "html"
    if output != "html":
        marked = None
        if len(trials) == 2:
            marked = first_difference(align(*(read(t.get("trajectory"), t.get("job_id")) for t in trials)))
        width = call.params.integer("width")
        from ...base.masking import scrub_value

        elements = [scrub_value(listing.element(t, width, marked), secrets) for t in trials]
        return Combined(elements, {"text": lambda: listing.text(trials, secrets)})
    given = options.get("output_dir")
    if given == "-":
        return Combined([], page=lambda: "".join(page.render(trials, secrets)))
    path = page_path(given, call.root, trials)

    def write() -> Any:
        directory = os.path.dirname(path)
        if directory and not (given and path == given):  # a name we chose: its directory is made
            os.makedirs(directory, exist_ok=True)
        return page.render(trials, secrets)

    return Combined([path], files={path: write}, opens=bool(options.get("open")))
