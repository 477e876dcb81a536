"""Task archives: one ZIP per download task (docs/contract.md 2.8, 3.4).

A dimension with ``archive:`` runs on a download-task id.  The task lists job
ids; every job runs the dimension's parts (each part writes one archive entry
or a folder of entries), concurrently, into a hidden staging directory on the
output volume.  A part marked ``required`` decides whether the job succeeded;
the others record their failures under their own manifest key.  The archive
is built as a temp file beside the final path and renamed when complete; no
archive is created when every job failed.
"""

from __future__ import annotations

import os
from typing import Any

from ..base.errors import AuthError, Cancelled
from ..base.files import (
    NoRoomError,
    join_under,
    replacing,
    safe_component,
    staging_dir,
)
from ..base.jsontext import dumps
from ..base.log import abandoned
from ..table.model import ArchiveEntry, StepPart
from ..table.templates import Context, entry_component, render_file, render_label
from .outcomes import Failure, MultiFailure, Outcome, as_error
from .pipeline import Pipeline
from .transforms import task_job_ids


class ArchiveRun:
    def __init__(self, pipeline: Pipeline, task: str):
        self.p = pipeline
        self.task = task
        assert pipeline.dim.archive is not None
        self.spec = pipeline.dim.archive
        self.parts = {name: part for name, part in pipeline.dim.parts.items() if isinstance(part, ArchiveEntry)}

    def run(self) -> tuple[Any, list[Failure]]:
        p = self.p
        ctx = Context({**p.opts, "task": self.task})
        path = join_under(p.root, render_file(self.spec.file, Context({"task": self.task})))
        if p.skip(path):
            return path, []
        task = p.request(self.spec.task_request, ctx)
        jobs = task_job_ids(task, self.task)
        counter = p.rt.counter(self.spec.progress, len(jobs)) if self.spec.progress else None
        os.makedirs(p.root, exist_ok=True)
        prefix = f".{safe_component(self.task)[:40]}-{self.spec.kind or 'archive'}-"
        with staging_dir(p.root, prefix) as staging:  # locked while it lives; dead runs' ones swept
            def one(job: str) -> dict[str, str]:
                error = None
                try:
                    return self.job(ctx.child(job=job), job, staging)
                except BaseException as exc:
                    error = exc
                    raise
                finally:
                    if counter:  # a failed job is recorded in the archive; an abandoned one is said
                        counter.step(job, not abandoned(error), error)

            outcomes = p.rt.map(jobs, one)
            return self.finish(path, task, jobs, outcomes, staging)

    @staticmethod
    def entry(part: ArchiveEntry, job: str) -> str:
        return render_label(part.entry, Context({"job": entry_component(job)}))

    def job(self, ctx: Context, job: str, staging: str) -> dict[str, str]:
        """Run every part for one job; return {part: error} of optional parts that failed."""
        soft: dict[str, str] = {}
        for name, part in self.parts.items():
            dest = os.path.join(staging, self.entry(part, job))
            step = isinstance(part.part, StepPart)
            try:
                raw = self.p.fetch(part.part, ctx, job, dest if step else None)
                if not step:
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    with open(dest, "w", encoding="utf-8") as handle:
                        handle.write(dumps(raw, self.p.rt.pretty))
            except NoRoomError:
                raise
            except (AuthError, Cancelled):
                if part.required:
                    raise
                soft[name] = "authentication failed (HTTP 401)"
                continue
            except Exception as exc:  # noqa: BLE001 - one bad entry never takes the archive down
                error = as_error(exc)
                if part.required or isinstance(error, NoRoomError):
                    raise error from None
                soft[name] = str(error)
                continue
            ctx.parts[name] = raw
        return soft

    def finish(self, path: str, task: dict[str, Any], jobs: list[str], outcomes: list[Outcome],
               staging: str) -> tuple[Any, list[Failure]]:
        p = self.p
        ok = [o for o in outcomes if not o.failures]
        failures = [Failure(o.ident, f.message, f.network) for o in outcomes for f in o.failures[:1]]
        job_failures = [{"job_id": f.ident, "error": f.message} for f in failures]
        soft_keys = {name: part.failures for name, part in self.parts.items() if not part.required and part.failures}
        soft: dict[str, list[dict[str, str]]] = {key: [] for key in soft_keys.values()}
        for outcome in ok:
            for name, message in (outcome.value or {}).items():
                soft[soft_keys[name]].append({"job_id": outcome.ident, "error": message})
                failures.append(Failure(outcome.ident, f"{self.parts[name].label or name}: {message}", False))
        if not ok:
            return None, failures
        manifest = {
            "task_id": self.task,
            "group_id": task.get("group_id"),
            "created_at": task.get("created_at"),
            "total_jobs": len(jobs),
            "successful_jobs": len(ok),
            "failed_jobs": len(jobs) - len(ok),
            "success_job_ids": [o.ident for o in ok],
            "failures": job_failures,
            **soft,
        }
        p.rt.log.progress(f"creating archive {path}")
        self.write_zip(path, staging, [o.ident for o in ok], manifest)
        p.rt.log.file("wrote", path)
        return path, failures

    def write_zip(self, path: str, staging: str, jobs: list[str], manifest: dict[str, Any]) -> None:
        import zipfile  # only task archives write one

        with replacing(path) as (fd, tmp):
            with os.fdopen(fd, "wb", closefd=False) as raw, zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
                # Entries part by part (the table's order), jobs in task order.
                for name in self.spec.order:
                    for job in jobs:
                        for full in _files(os.path.join(staging, self.entry(self.parts[name], job))):
                            archive.write(full, os.path.relpath(full, staging).replace(os.sep, "/"))
                archive.writestr("manifest.json", dumps(manifest, self.p.rt.pretty))


def _files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    found = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        found += [os.path.join(dirpath, f) for f in sorted(filenames)]
    return found


def run_archive(pipeline: Pipeline, task: str) -> Any:
    value, failures = ArchiveRun(pipeline, task).run()
    if failures:
        raise MultiFailure(failures, value)
    return value
