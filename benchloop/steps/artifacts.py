"""Artifact listings and downloads for a job, a group or a download task.

Listing entries get ``job_id`` (and ``group_id`` in group mode) added and are
filtered by ``--include``/``--exclude`` (shell globs on the name).  With
``--list-only`` the filtered entries are the result (printed as one flat
array).  Otherwise each entry is classified (CONTRACT.md 1.5): a truthy
``url`` is downloadable, ``error_code: no_artifact`` is skipped, anything
else is a failure of that artifact.  Downloads go through the backend proxy,
stream to a temp file beside the destination and are renamed when complete.
A 404 or an HTML error page from the proxy writes the empty ``.tgz``
placeholder; a redirect to a login page is an authentication failure (exit 3),
never a placeholder.

Unlike the reference client, the artifact name is passed to the proxy
(``?name=``), so a job with several artifacts does not download the same
stream under several names.
"""

from __future__ import annotations

import fnmatch
import gzip
import io
import os
import re
import tarfile
from typing import Any

from ..archive import entry_component
from ..errors import AuthError, BenchloopError, Cancelled, StepError
from ..http import ArtifactMissing
from ..log import ByteProgress, Counter
from ..writers import atomic_write, join_under, safe_component
from . import WRITTEN

_VAR = re.compile(r"\{([^{}]+)\}")


def placeholder_bytes() -> bytes:
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w"):
        pass
    return raw.getvalue()


def _wanted(name: str, include: str | None, exclude: str | None) -> bool:
    if include and not fnmatch.fnmatchcase(name, include):
        return False
    return not (exclude and fnmatch.fnmatchcase(name, exclude))


class Artifacts:
    def __init__(self, pipeline, part: dict[str, Any], ctx, ident: str):
        self.p = pipeline
        self.params = part.get("with") or {}
        self.ctx = ctx
        self.ident = ident
        self.mode = pipeline.dim_name
        self.list_only = not pipeline.files
        self.include = pipeline.opts.get("include")
        self.exclude = pipeline.opts.get("exclude")
        self.failures: list[Any] = []
        self.bar: ByteProgress | None = None

    # -- helpers -------------------------------------------------------------
    def fail(self, ident: str, message: str, network: bool = False) -> None:
        from ..engine import Failure

        self.failures.append(Failure(ident, message, network))

    def listing(self, job: str) -> list[dict[str, Any]]:
        body = self.p.request(self.params["listing"], self.ctx.child(job=job))
        entries = body.get("artifacts") if isinstance(body, dict) else None
        if entries is None:
            entries = []
        if not isinstance(entries, list):
            raise StepError("artifact listing must carry 'artifacts' as a list")
        out = []
        for entry in entries:
            entry = dict(entry) if isinstance(entry, dict) else {"value": entry}
            entry["job_id"] = job
            if self.mode == "group":
                entry["group_id"] = self.ident
            if _wanted(str(entry.get("name") or ""), self.include, self.exclude):
                out.append(entry)
        return out

    def fetch(self, job: str, dest: str, name: str | None) -> None:
        log = self.p.rt.log
        if self.p.skip_existing and os.path.isfile(dest):
            log.info(f"skip existing {dest}")
            return
        endpoint = self.p.rt.spec["endpoints"][self.params["download"]]
        from ..engine import render_path

        path = render_path(endpoint["path"], self.ctx.child(job=job))
        try:
            self.p.rt.http.download(path, dest, params={"name": name} if name else None,
                                    on_bytes=self.bar.add if self.bar else None, missing_ok=True)
            log.info(f"downloaded {dest}")
        except ArtifactMissing as exc:
            atomic_write(dest, placeholder_bytes())
            log.warn(f"no artifact for job={job}, wrote empty {dest} ({exc})")
        finally:
            if self.bar:
                self.bar.file_done()

    # -- modes ---------------------------------------------------------------
    def jobs(self) -> list[str]:
        if self.mode == "job":
            return [self.ident]
        if self.mode == "group":
            return self.p.enumerate(self.params["enumerate"], self.ctx, self.ident)
        from ..archive import _task_jobs

        return _task_jobs(self.p.request(self.params["task"], self.ctx))

    def dest(self, job: str, name: str | None) -> str:
        """Destination from the table's ``layout`` template; task mode quotes the job id."""
        values = {self.mode: safe_component(self.ident), "name": safe_component(name or "artifact"),
                  # Task archives name files by the quoted job id (already one safe component).
                  "job": entry_component(job) if self.mode == "task" else safe_component(job)}
        rel = _VAR.sub(lambda m: values[m.group(1)], self.params["layout"])
        return join_under(self.p.root, rel)

    def run_job(self, job: str) -> list[dict[str, Any]]:
        if self.mode == "task" and not self.list_only:
            dest = self.dest(job, None)
            name = os.path.basename(dest)
            if not _wanted(name, self.include, self.exclude):
                self.p.rt.log.info(f"skip filtered {name}")
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
                self.p.rt.log.info(f"no artifact for job={job} (no_artifact)")
            else:
                self.fail(f"{job}:{name}", str(entry.get("error_code") or "missing_url"))
        return entries

    def run(self) -> Any:
        from ..engine import MultiFailure, run_pool

        rt = self.p.rt
        jobs = self.jobs()
        verb = "listed" if self.list_only else "processed"
        counter = None
        if self.mode == "job":
            label = "job artifact listings" if self.list_only else "job artifact downloads"
            counter = self.p.shared_counter(label, "jobs", verb)
        elif self.list_only and self.mode == "group":
            per_group = self.p.shared_counter("group artifact listings", "groups", verb)
        elif self.list_only:
            counter = Counter(rt.log, "task artifact listings", len(jobs), "jobs", verb, eta=True)
        else:
            label = f"{self.mode} artifact jobs {self.ident}"
            counter = Counter(rt.log, label, len(jobs), "jobs", verb, eta=self.mode == "task")
        if not self.list_only:
            self.bar = ByteProgress(rt.log, f"{self.mode} {self.ident} artifacts", len(jobs))

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
            outcomes = run_pool(jobs, one, rt.concurrency, rt)
        finally:
            if self.bar:
                self.bar.close()
        if self.list_only and self.mode == "group":
            per_group.step(self.ident)
        listing_failures = [f for o in outcomes for f in o.failures]
        if self.mode == "group" and jobs and len(listing_failures) == len(jobs):
            network = all(f.network for f in listing_failures)
            detail = "; ".join(f"{f.ident}: {f.message}" for f in listing_failures)
            message = f"failed to fetch {len(jobs)} artifact listings: {detail}"
            raise StepError(f"network: {message}" if network else message, network=network)
        failures = (listing_failures if self.mode != "job" else []) + self.failures
        if self.mode == "job" and listing_failures:
            raise StepError(listing_failures[0].message, network=listing_failures[0].network)
        value: Any = [e for o in outcomes for e in (o.value or [])] if self.list_only else WRITTEN
        if failures:
            raise MultiFailure(failures, value)
        return value


def artifacts(pipeline, part: dict[str, Any], ctx, ident: str, dest: str | None) -> Any:
    return Artifacts(pipeline, part, ctx, ident).run()
