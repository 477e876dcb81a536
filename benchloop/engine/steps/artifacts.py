"""Artifact listings and downloads for a job, a group or a download task.

Listing entries are selected by the part's ``items:`` (the ``artifacts``
collection, ``job_id`` and, in group mode, ``group_id`` added, filtered by
``--include``/``--exclude`` on the name).  With
``--list-only`` the filtered entries are the result (printed as one flat
array).  Otherwise each entry is classified (docs/contract.md 1.5): a truthy
``url`` is downloadable, ``error_code: no_artifact`` is skipped, anything
else is a failure of that artifact.  Downloads go through the backend proxy,
stream to a temp file beside the destination and are renamed when complete.
The table's ``missing`` rule (statuses and content types, on the artifacts
part) says when the proxy means "no artifact": the empty ``.tgz`` placeholder
is written instead.  A redirect to a login page is an authentication failure
(exit 3), never a placeholder.

Unlike the reference client, the artifact name is passed to the proxy
(``?name=``), so a job with several artifacts does not download the same
stream under several names.
"""

from __future__ import annotations

import os
from typing import Any

from ...base.errors import AuthError, BenchloopError, Cancelled, StepError
from ...base.files import safe_component
from ...table.templates import VAR, entry_component
from ..items import wanted
from ..outcomes import Failure, MultiFailure, Outcome, aggregate
from ..stepcall import Counter, StepCall
from ..transforms import task_job_ids
from .registry import WRITTEN, step


class Artifacts:
    def __init__(self, call: StepCall):
        self.call = call
        self.ident = call.ident
        self.mode = call.dimension
        self.list_only = not call.files
        self.include = call.options.get("include")
        self.exclude = call.options.get("exclude")
        self.failures: list[Failure] = []
        self.bar: Any = None

    # -- helpers -------------------------------------------------------------
    def fail(self, ident: str, message: str, network: bool = False) -> None:
        self.failures.append(Failure(ident, message, network))

    def listing(self, job: str) -> list[dict[str, Any]]:
        return self.call.items(self.call.request("listing", job=job), job=job)

    def fetch(self, job: str, dest: str, name: str | None) -> None:
        log = self.call.log
        if self.call.skip(dest):
            return
        try:
            missing = self.call.fetch_file("download", dest, on_bytes=self.bar.add if self.bar else None,
                                           job=job, name=name)
            if missing:
                log.warn(f"no artifact for job={job}, wrote empty {dest} (artifact {missing})")
                log.touched("written", dest)
            else:
                log.file("downloaded", dest)
        finally:
            if self.bar:
                self.bar.file_done()

    # -- modes ---------------------------------------------------------------
    def jobs(self) -> list[str]:
        if self.mode == "job":
            return [self.ident]
        if self.mode == "group":
            return self.call.enumerate("enumerate")
        return task_job_ids(self.call.request("task"), self.ident)

    def dest(self, job: str, name: str | None) -> str:
        """Destination from the table's ``layout`` template; task mode quotes the job id."""
        values = {self.mode: safe_component(self.ident), "name": safe_component(name or "artifact"),
                  # Task archives name files by the quoted job id (already one safe component).
                  "job": entry_component(job) if self.mode == "task" else safe_component(job)}
        return self.call.path(VAR.sub(lambda m: values[m.group(1)], self.call.params.text("layout")))

    def run_job(self, job: str) -> list[dict[str, Any]]:
        if self.mode == "task" and not self.list_only:
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
            if entry.get("url"):
                try:
                    self.fetch(job, self.dest(job, name), entry.get("name"))
                except (AuthError, Cancelled):
                    raise
                except BenchloopError as exc:
                    self.fail(f"{job}:{name}", str(exc), exc.network)
            elif entry.get("error_code") == "no_artifact":
                self.call.log.per_file(f"no artifact for job={job} (no_artifact)")
            else:
                self.fail(f"{job}:{name}", str(entry.get("error_code") or "missing_url"))
        return entries

    def counter(self, jobs: list[str]) -> Counter | None:
        verb = "listed" if self.list_only else "processed"
        if self.mode == "job":
            label = "job artifact listings" if self.list_only else "job artifact downloads"
            return self.call.counter(label, "jobs", verb)
        if self.list_only and self.mode == "group":
            return None  # counted per group, see run()
        if self.list_only:
            return self.call.counter("task artifact listings", "jobs", verb, total=len(jobs), eta=True)
        return self.call.counter(f"{self.mode} artifact jobs {self.ident}", "jobs", verb, total=len(jobs),
                                 eta=self.mode == "task")

    def run(self) -> Any:
        jobs = self.jobs()
        counter = self.counter(jobs)
        per_group = self.call.counter("group artifact listings", "groups", "listed") \
            if self.list_only and self.mode == "group" else None
        if not self.list_only:
            self.bar = self.call.byte_progress(f"{self.mode} {self.ident} artifacts", len(jobs))

        def one(job: str) -> list[dict[str, Any]]:
            ok = False
            try:
                result = self.run_job(job)
                ok = True
                return result
            finally:
                if counter:
                    counter.step(job, ok)

        try:
            outcomes = self.call.map(jobs, one)
        finally:
            if self.bar:
                self.bar.close()
        if per_group:
            per_group.step(self.ident)
        return self.result(jobs, outcomes)

    def result(self, jobs: list[str], outcomes: list[Outcome]) -> Any:
        listing_failures = [f for o in outcomes for f in o.failures]
        if self.mode == "group" and jobs and len(listing_failures) == len(jobs):
            raise aggregate(listing_failures, "artifact listings")
        if self.mode == "job" and listing_failures:
            raise StepError(listing_failures[0].message, network=listing_failures[0].network)
        failures = (listing_failures if self.mode != "job" else []) + self.failures
        value: Any = [e for o in outcomes for e in (o.value or [])] if self.list_only else WRITTEN
        if failures:
            raise MultiFailure(failures, value)
        return value


@step("artifacts")
def artifacts(call: StepCall) -> Any:
    return Artifacts(call).run()
