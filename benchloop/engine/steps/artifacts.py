"""Artifact listings and downloads for a job, a group or a download task.

Listing entries are selected by the part's ``items:`` (the ``artifacts``
collection, ``job_id`` and, in group mode, ``group_id`` added, filtered by
``--include``/``--exclude`` on the name).  With
``--list-only`` the filtered entries are the result (printed as one flat
array).  Otherwise each entry is classified by the table's expressions
(docs/contract.md 1.5): ``downloadable`` (a truthy ``url``), ``absent`` (``error_code:
no_artifact``: skipped), anything else a failure of that artifact (``reason``).  Downloads go through the backend proxy,
stream to a temp file beside the destination and are renamed when complete.
The table's ``missing`` rule (statuses and content types, on the artifacts
part) says when the proxy means "no artifact": the empty ``.tgz`` placeholder
is written instead.  A redirect to a login page is an authentication failure
(exit 3), never a placeholder.

A listing entry that announces its size (the table's ``size`` expression: an integer >= 0)
is the size the download must have: a body that ends early (no ``Content-Length``, the
connection closed) or of any other size fails that artifact with both sizes, nothing is
saved, and ``--skip-existing`` fetches a file of another size again.
``--allow-size-mismatch`` keeps such a body, with a warning.

Where the jobs come from follows from the ``with:`` values the table gives: a download
task (``task``), every job of a group (``enumerate``), or the job itself.  The
counters' labels and what they count are the table's too (``progress``,
``listing_progress``).

Unlike the reference client, the artifact name is passed to the proxy
(``?name=``), so a job with several artifacts does not download the same
stream under several names.
"""

from __future__ import annotations

import os
from typing import Any

from ...base.errors import AuthError, BenchloopError, Cancelled, StepError
from ...base.files import safe_component, size_of
from ...table.templates import VAR, entry_component
from ..items import wanted
from ..outcomes import Failure, MultiFailure, Outcome, aggregate, is_permanent
from ..stepcall import Counter, StepCall
from ..transforms import task_job_ids
from .registry import WRITTEN, step


class Artifacts:
    def __init__(self, call: StepCall):
        self.call = call
        self.ident = call.ident
        self.from_task = "task" in call.params  # a download task's jobs, one .tgz per job
        self.enumerates = "enumerate" in call.params  # every job of a group
        self.list_only = not call.files
        self.include = call.options.get("include")
        self.exclude = call.options.get("exclude")
        self.any_size = bool(call.options.get("allow_size_mismatch"))
        self.failures: list[tuple[str, Failure]] = []  # (job, its file's failure), as they happen
        self.bar: Any = None

    # -- helpers -------------------------------------------------------------
    def fail(self, job: str, ident: str, message: str, network: bool = False, permanent: bool = False) -> None:
        self.failures.append((job, Failure(ident, message, network, permanent=permanent)))

    def listing(self, job: str) -> list[dict[str, Any]]:
        return self.call.items(self.call.request("listing", job=job), job=job)

    def announced(self, entry: dict[str, Any]) -> int | None:
        """The size a listing entry announces, when it is a byte count (anything else: unknown)."""
        size = self.call.params.expression("size")(entry)
        return size if type(size) is int and 0 <= size < 1 << 63 else None

    def fetch(self, job: str, dest: str, name: str | None, size: int | None = None) -> None:
        log = self.call.log
        strict = None if self.any_size else size
        if self.call.skip(dest, strict):
            return
        try:
            missing = self.call.fetch_file("download", dest, on_bytes=self.bar.add if self.bar else None,
                                           size=strict, job=job, name=name)
            if missing:
                log.warn(f"no artifact for job={job}, wrote empty {dest} (artifact {missing})")
                log.touched("placeholder", dest)
            else:
                log.file("downloaded", dest)
                have = size_of(dest) if size is not None and strict is None else size
                if have != size:
                    log.warn(f"{dest} is {have} bytes, the listing announced {size} "
                             "(kept: --allow-size-mismatch)")
        finally:
            if self.bar:
                self.bar.file_done()

    # -- modes ---------------------------------------------------------------
    def jobs(self) -> list[str]:
        if self.from_task:
            return task_job_ids(self.call.request("task"), self.ident)
        if self.enumerates:
            return self.call.enumerate("enumerate")
        return [self.ident]

    def dest(self, job: str, name: str | None) -> str:
        """Destination from the table's ``layout`` template; task mode quotes the job id."""
        values = {self.call.dimension: safe_component(self.ident), "name": safe_component(name or "artifact"),
                  # Task archives name files by the quoted job id (already one safe component).
                  "job": entry_component(job) if self.from_task else safe_component(job)}
        return self.call.path(VAR.sub(lambda m: values[m.group(1)], self.call.params.text("layout")))

    def run_job(self, job: str) -> list[dict[str, Any]]:
        if self.from_task and not self.list_only:
            dest = self.dest(job, None)
            name = os.path.basename(dest)
            if not wanted(name, self.include, self.exclude):
                self.call.log.per_file(f"skip filtered {name}")
                return []
            self.fetch(job, dest, None)
            return []
        entries = self.listing(job)
        if self.list_only:
            return entries
        for entry in entries:
            name = str(entry.get("name") or "artifact")
            if self.call.params.expression("downloadable")(entry):
                try:
                    self.fetch(job, self.dest(job, name), entry.get("name"), self.announced(entry))
                except (AuthError, Cancelled):
                    raise
                except BenchloopError as exc:
                    self.fail(job, f"{job}:{name}", str(exc), exc.network, is_permanent(exc))
            elif self.call.params.expression("absent")(entry):
                self.call.log.per_file(f"no artifact for job={job} ({entry.get('error_code')})")
            else:  # the backend's own reason why there is no URL (artifact_sign_failed): it says so again
                self.fail(job, f"{job}:{name}", str(self.call.params.expression("reason")(entry)), permanent=True)
        return entries

    def counter(self, jobs: list[str]) -> tuple[Counter, bool]:
        """The table's counter of this run, and whether it counts the ids of the command (one
        shared counter, stepped once per id) rather than the jobs of this id."""
        spec = self.call.params.progress("listing_progress" if self.list_only else "progress")
        label = self.call.render(spec.label)
        if spec.counts == "ids":
            return self.call.counter(label, spec.unit, spec.action, eta=spec.eta), True
        return self.call.counter(label, spec.unit, spec.action, total=len(jobs), eta=spec.eta), False

    def run(self) -> Any:
        jobs = self.jobs()
        counter, per_id = self.counter(jobs)
        if not self.list_only:
            self.bar = self.call.byte_progress(self.call.render(self.call.params.text("bytes_label")), len(jobs))

        def one(job: str) -> list[dict[str, Any]]:
            ok, error = False, None
            try:
                result = self.run_job(job)
                ok = True
                return result
            except BaseException as exc:
                error = exc
                raise
            finally:
                if not per_id:
                    counter.step(job, ok, error)

        outcomes: list[Outcome] = []
        try:
            outcomes = self.call.map(jobs, one)
        finally:
            if self.bar:
                self.bar.close()
            if per_id:
                counter.step(self.ident, bool(outcomes) and not any(o.failures for o in outcomes))
        return self.result(jobs, outcomes)

    def result(self, jobs: list[str], outcomes: list[Outcome]) -> Any:
        listing_failures = [f for o in outcomes for f in o.failures]
        one_job = jobs == [self.ident] and not (self.from_task or self.enumerates)  # the id is the job
        if self.enumerates and jobs and len(listing_failures) == len(jobs):
            raise aggregate(listing_failures, "artifact listings")
        if one_job and listing_failures:
            raise StepError(listing_failures[0].message, network=listing_failures[0].network)
        # The files' failures in the order of the jobs (the jobs run concurrently: the summary
        # must not depend on which finished first), each job's in the order of its listing.
        position = {job: n for n, job in enumerate(jobs)}
        files = [f for _, f in sorted(self.failures, key=lambda jf: position.get(jf[0], len(jobs)))]
        failures = (listing_failures if not one_job else []) + files
        value: Any = [e for o in outcomes for e in (o.value or [])] if self.list_only else WRITTEN
        if failures:
            raise MultiFailure(failures, value)
        return value


@step("artifacts")
def artifacts(call: StepCall) -> Any:
    return Artifacts(call).run()
