"""``bl pull --sync``: refresh a running group, fetching again only what changed.

Why ``pull --sync`` and not a ``bl sync``: a sync is a pull whose sections, filters, files
and messages are exactly ``pull``'s (``aws s3 sync`` and rclone likewise copy what a copy
would, only less of it); a second command would repeat every option of pull and drift
from it.  What the table says (``compose.sync``) and what happens, per group:

1. The ``list`` section (``jobs``: ``<group>/job_list.json``) and the ``refresh`` sections
   (the metrics and task lists) are fetched and written again, every time: they are the
   group's lists and aggregates, and a running group changes them all the time.
2. The list's items are compared with the manifest of the last sync
   (``<group>/.bl-sync.json``): an item is unchanged for a section when its ``state`` fields
   (status, updated_at) are the ones recorded, the section is recorded as done for it, and
   every file recorded for it is still there.
3. Every other section runs for the changed items only (``scope.py``: its enumeration of
   the group's jobs yields them, without a second scan), and writes its files of the group
   as a whole (the export, the report summary) again only when an item changed or the file
   is missing.
4. When a section is done, every item it finished without a failure is entered in the
   manifest with its state and the files it got, and the manifest is replaced atomically.

So an interrupted sync leaves a manifest that names only items whose files were complete
(every file is written atomically, and an item is entered after its files): the next sync
fetches the rest, and an item whose recorded file was removed is fetched again.  A
manifest that cannot be read is ignored (every item is fetched again) with a warning.

The manifest is data from disk, checked like every other path: a recorded file outside the
output root (``../x``, ``/etc/hostname``, through a symlinked directory) is never looked
at; its section of that item is fetched again, with a warning.  The manifest itself must be
a regular file or absent: a symlink (or a directory, a FIFO) at its place, or a group
directory that leads out of the root, is refused before any request (exit 2), since
reading it would trust another file's content and replacing it would destroy what the link
was for; removing it makes the next sync fetch every item again.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from ..base import files, jsonitems, jsontext
from ..base.errors import AuthError, BenchloopError, Cancelled, StepError, UsageError
from ..table.model import Action, Compose, PagedPart, Sync
from ..table.templates import Context, render_file
from .compose import chosen_sections, section_options, sections_for
from .outcomes import Failure, MultiFailure, Outcome, as_error, failure_of
from .pipeline import Pipeline
from .runtime import Runtime
from .scope import Scope

VERSION = 1


def run_sync(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any],
             process: Callable[[Pipeline, str], Any]) -> list[Outcome]:
    """The outcome of every ``<group>:<section>`` of a sync, group after group; a 401 raises."""
    compose = action.compose
    assert compose is not None and compose.sync is not None
    until = compose.sync.until
    given = until.option if until is not None and opts.get(until.option) else compose.sync.option
    flag = action.flag_of(given)  # as the user typed it
    if dim != "group":
        raise UsageError(f"{flag} refreshes groups: give -g GROUP")
    if opts.get("skip_existing"):
        raise UsageError(f"{flag} decides itself which files to fetch again: leave out --skip-existing")
    names = sections_for(rt.spec, compose, dim, chosen_sections(action, compose, opts.get(compose.option)))
    root = opts.get("output_dir") or rt.output_dir
    for ident in ids:  # before any request
        manifest_path(root, compose.sync, ident, flag)
    wait = until.wait if until is not None and opts.get(until.option) else None
    if wait is None and wait_given(compose.sync, opts):
        raise UsageError(f"{action.flag_of(wait_given(compose.sync, opts) or '')} goes with "
                         f"{action.flag_of(until.option if until else '')}")
    rt.pool = rt.concurrency * max(len(names) + 1, 1)
    if wait is not None:  # groups wait side by side, each syncing as its jobs finish
        rt.pool *= max(len(ids), 1)
        results = rt.map(ids, lambda ident: GroupSync(rt, compose, ident, opts, names, process).until_done(),
                         len(ids))
        return [o for r in results for o in (r.value or [])] + [r for r in results if r.failures]
    outcomes: list[Outcome] = []
    for ident in ids:
        outcomes += GroupSync(rt, compose, ident, opts, names, process).run()
    return outcomes


def wait_given(sync: Sync, opts: dict[str, Any]) -> str | None:
    """The option of ``--until-done``'s wait given without it (its timeout), if any."""
    wait = sync.until.wait if sync.until is not None else None
    name = wait.timeout if wait is not None else None
    return name if name and opts.get(name) is not None else None


def manifest_path(root: str, sync: Sync, group: str, flag: str = "--sync") -> str:
    """Where a group's manifest is, under the output root; a usage error when what is there is
    not a regular file bl may read and replace (module docstring)."""
    relative = render_file(sync.manifest, Context({"group": group}))
    where = os.path.join(root, relative)
    try:
        path = files.join_under(root, relative)
    except ValueError:
        raise UsageError(f"cannot sync {group} ({flag}): the manifest {where} leads outside the output root "
                         f"(a symlinked directory?); refusing to read or write it") from None
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise UsageError(f"cannot sync {group} ({flag}): the manifest {where}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(mode):
        raise UsageError(f"cannot sync {group} ({flag}): the manifest {where} is a symbolic link; refusing to read it "
                         f"or write through it (remove it: the next sync fetches every job again)")
    if not stat.S_ISREG(mode):
        raise UsageError(f"cannot sync {group} ({flag}): the manifest {where} is not a regular file; refusing to "
                         f"read or replace it (remove it: the next sync fetches every job again)")
    return path


class Manifest:
    """What the last syncs of one group fetched: per item, its state and, per section, its files
    (relative to the output root)."""

    def __init__(self, root: str, path: str, sync: Sync, group: str, log: Any):
        self.root, self.path, self.sync, self.group = root, path, sync, group
        self.items: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        # Equal states, empty file lists and sections of no file are one object each (10^6 jobs
        # of one status whose sections wrote group-wide files only: a few objects, not 10^6).
        self.shared: dict[Any, Any] = {}
        header: dict[str, Any] = {}
        items: dict[str, dict[str, Any]] = {}
        outside: list[str] = []
        ours = True
        try:  # an entry at a time (base/jsonitems.py): a 10^6-job manifest is never one document
            with open(path, encoding="utf-8") as handle:
                for ident, entry in jsonitems.members(handle, "items", header):
                    if header and not self.ours(header):  # what save writes comes first: not ours
                        ours = False
                        break
                    kept = self.checked(entry, outside)
                    if kept is not None:
                        items[ident] = kept
        except FileNotFoundError:
            return
        except jsonitems.MissingList:
            ours = False
        except (OSError, ValueError) as exc:
            log.warn(f"sync {group}: the manifest {path} cannot be read ({exc}); every job is fetched again")
            return
        if not ours or not self.ours(header):
            log.warn(f"sync {group}: the manifest {path} is not one this bl writes; every job is fetched again")
            return
        self.items = items
        if outside:
            shown = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
            log.warn(f"sync {self.group}: the manifest {self.path} names {len(outside)} path(s) outside the "
                     f"output root ({shown}); ignored, their jobs' files are fetched again")

    def ours(self, header: dict[str, Any]) -> bool:
        return (header.get("version") == VERSION and header.get("key") == self.sync.key
                and header.get("state") == list(self.sync.state))

    def share(self, state: Any) -> Any:
        """One object for equal states (a state of lists or objects keeps its own)."""
        if not isinstance(state, dict):
            return state
        try:
            key = tuple(state.items())
            return self.shared.setdefault(key, state)
        except TypeError:
            return state

    def inside(self, relative: Any) -> bool:
        """Whether a recorded path is a file name under the output root (never looked at else)."""
        if not isinstance(relative, str) or not relative:
            return False
        try:
            files.join_under(self.root, relative)
        except ValueError:
            return False
        return True

    def checked(self, entry: Any, outside: list[str]) -> dict[str, Any] | None:
        """A manifest's entry as this bl writes it (None if it is not one); a section that
        records a path outside the output root is left out (fetched again), the paths added to
        ``outside`` (one warning names them)."""
        if not isinstance(entry, dict) or not isinstance(entry.get("sections"), dict):
            return None
        sections = {}
        for section, paths in entry["sections"].items():
            if not isinstance(paths, list):
                continue
            bad = [p for p in paths if not self.inside(p)]
            if bad:
                outside += [repr(p) for p in bad]
                continue
            sections[section] = paths if paths else self.shared.setdefault((), [])
        if not any(sections.values()):  # no file of its own (a section of group-wide files): shared
            sections = self.shared.setdefault(("sections", *sections), sections)
        kept = {"state": self.share(entry.get("state")), "sections": sections}
        recorded = entry.get("permanent")
        if isinstance(recorded, dict):
            valid = {s: fs for s, fs in recorded.items() if s in sections and isinstance(fs, list) and all(
                isinstance(f, dict) and isinstance(f.get("id"), str) and isinstance(f.get("message"), str)
                for f in fs)}
            if valid:
                kept["permanent"] = valid
        return kept

    def stale(self, ident: str, state: dict[str, Any], section: str) -> bool:
        entry = self.items.get(ident)
        if entry is None or entry.get("state") != state:
            return True
        done = (entry.get("sections") or {}).get(section)
        if not isinstance(done, list):
            return True
        return not all(self.inside(p) and files.exists(files.join_under(self.root, p)) for p in done)

    def record(self, section: str, states: dict[str, dict[str, Any]], done: set[str],
               written: dict[str, list[str]], permanent: dict[str, list[dict[str, str]]] | None = None) -> None:
        """Enter the items a section finished, with their files and the section's permanent
        failures of each (``{"id", "message"}``: not asked again until the item changes); then
        replace the manifest."""
        with self.lock:
            for ident in done:
                entry = self.items.get(ident)
                if entry is None or entry.get("state") != states[ident]:
                    entry = self.items[ident] = {"state": states[ident], "sections": {}}
                paths = sorted(os.path.relpath(p, self.root) for p in written.get(ident, ()))
                entry["sections"] = {**entry["sections"], section: paths}  # never changed in place: shared
                failures = (permanent or {}).get(ident)
                kept = {k: v for k, v in (entry.get("permanent") or {}).items() if k != section}
                if failures:
                    kept[section] = failures
                if kept:
                    entry["permanent"] = kept
                else:
                    entry.pop("permanent", None)
            self.save(states)

    def permanent(self, states: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
        """The permanent failures recorded for the items listed now (``{"id", "message"}``)."""
        return [f for ident in states for section in (self.items.get(ident, {}).get("permanent") or {}).values()
                for f in section]

    def save(self, states: dict[str, dict[str, Any]]) -> None:
        """Replace the manifest: the items listed now, in list order (unlisted items go), written
        an entry at a time (the document of 10^6 jobs is never one string)."""
        header = jsontext.encode({"version": VERSION, "group_id": self.group, "key": self.sync.key,
                                  "state": list(self.sync.state)}, False)

        def produce(out: Any) -> None:
            out.write(header[:-1] + ',"items":{')
            parts: list[str] = []
            comma = ""
            for ident in states:
                entry = self.items.get(ident)
                if entry is None:
                    continue
                parts.append(comma + jsontext.encode(ident, False) + ":" + jsontext.encode(entry, False))
                comma = ","
                if len(parts) >= 1000:
                    out.write("".join(parts))
                    parts.clear()
            out.write("".join(parts) + "}}\n")

        files.atomic_write_stream(self.path, produce)


FINAL_TRIES = 3  # syncs after the group finished, while failures that may still succeed remain


def retryable(outcomes: list[Outcome]) -> bool:
    return any(f.later for o in outcomes for f in o.failures)


class GroupSync:
    """One group's sync (module docstring, steps 1 to 4)."""

    def __init__(self, rt: Runtime, compose: Compose, ident: str, opts: dict[str, Any], names: list[str],
                 process: Callable[[Pipeline, str], Any]):
        assert compose.sync is not None
        self.rt, self.compose, self.sync, self.ident, self.opts = rt, compose, compose.sync, ident, opts
        self.process = process
        self.first = [self.sync.list, *[n for n in names if n in self.sync.refresh and n != self.sync.list]]
        self.rest = [n for n in names if n not in self.first]
        self.root = opts.get("output_dir") or rt.output_dir
        self.manifest: Manifest | None = None
        self.states: dict[str, dict[str, Any]] | None = None  # the items of the last sync, by id
        self.reported: set[tuple[str, str]] = set()  # permanent failures listed on stderr

    def pipeline(self, name: str, scope: Scope | None = None) -> Pipeline:
        section = self.compose.sections[name]
        target = self.rt.spec.section_action(section)
        return Pipeline(self.rt, target, "group", section_options(target, section, self.opts), scope=scope)

    def label(self, name: str) -> str:
        return f"{self.ident}:{name}"

    def run(self) -> list[Outcome]:
        """One sync of the group: every section's outcome, each failure that a next sync asks
        for again marked ``later`` (exit 75 when all are); the permanent failures recorded in
        the manifest are listed on stderr (those not listed before by this run of bl)."""
        outcomes = self.once()
        for outcome in outcomes:
            outcome.failures = [f if f.permanent else replace(f, later=True) for f in outcome.failures]
        if self.manifest is not None and self.states is not None:
            found = self.manifest.permanent(self.states)
            new = [f for f in found if (f["id"], f["message"]) not in self.reported]
            if new:
                self.rt.log.warn(f"sync {self.ident}: {len(found)} permanent failure(s), recorded in "
                                 f"{self.manifest.path} and asked again only when their job changes:")
                for failure in found:
                    self.rt.log.warn(f"  - {failure['id']}: {failure['message']}")
                self.reported |= {(f["id"], f["message"]) for f in found}
        return outcomes

    def once(self) -> list[Outcome]:
        self.states = None
        first = self.rt.map([self.label(n) for n in self.first], lambda label: self.plain(label.rsplit(":", 1)[1]),
                            len(self.first))
        if not self.rest:
            return first
        listed = first[0]
        if listed.failures:
            reason = f"not fetched: --sync compares the job list, which could not be fetched ({self.sync.list})"
            return first + [Outcome(self.label(n), failures=[Failure(self.label(n), reason, False)])
                            for n in self.rest]
        try:
            states = self.listed()
        except StepError as exc:
            return first + [Outcome(self.label(n), failures=[Failure(self.label(n), str(exc), False)])
                            for n in self.rest]
        try:  # checked before any request (run_sync); what changed since fails the sections
            path = manifest_path(self.root, self.sync, self.ident)
        except UsageError as exc:
            return first + [Outcome(self.label(n), failures=[Failure(self.label(n), f"not fetched: {exc}", False)])
                            for n in self.rest]
        manifest = Manifest(self.root, path, self.sync, self.ident, self.rt.log)
        self.manifest, self.states = manifest, states
        self.announce(states, manifest)
        plans = {n: [i for i in states if manifest.stale(i, states[i], n)] for n in self.rest}
        rest = self.rt.map([self.label(n) for n in self.rest],
                           lambda label: self.scoped(label.rsplit(":", 1)[1], plans, states, manifest),
                           len(self.rest))
        with manifest.lock:
            manifest.save(states)  # the items that left the list leave the manifest
        return first + rest

    # -- --until-done -------------------------------------------------------
    def until_done(self) -> list[Outcome]:
        """Sync, then wait with the table's waiter (``until.wait``, ``bl jobs wait``'s), syncing
        again after each look in which the finished jobs differ from the last sync's (or the
        last sync left failures that may still succeed), until the waiter says the group is
        finished; then up to ``FINAL_TRIES`` more syncs while such failures remain."""
        until = self.sync.until
        assert until is not None
        wait = until.wait
        started = time.monotonic()
        limit = float(self.opts.get(wait.timeout) or 0) if wait.timeout else 0.0
        outcomes = self.run()
        synced = self.finished()

        def on_answer(answer: Any, counts: dict[str, int] | None) -> None:
            nonlocal outcomes, synced
            finished = {i: s for i, s in self.states_of(answer).items() if until.finished(s)}
            if finished != synced or retryable(outcomes):
                more = len(set(finished) - set(synced or {}))
                self.rt.log.progress(f"sync {self.ident}: {more} more job(s) finished; syncing again" if more else
                                     f"sync {self.ident}: asking again for what may still succeed")
                outcomes = self.run()
                synced = self.finished()

        section = self.compose.sections[self.sync.list]
        target = self.rt.spec.section_action(section)
        options = {**section_options(target, section, self.opts),
                   **{k: self.opts.get(k) for k in (wait.timeout, wait.delay.option) if k}}
        pipeline = Pipeline(self.rt, target, "group", options)
        try:
            counts = pipeline.wait(wait, Context({**options, "group": self.ident}), self.ident, on_answer=on_answer)
        except (AuthError, Cancelled):
            raise
        except BenchloopError as exc:  # the wait's timeout (exit 124), or the group's own failure
            return outcomes + [Outcome(self.ident, failures=[failure_of(self.ident, exc)])]
        base = float(self.opts.get(wait.delay.option) or 1.0) if wait.delay.option else 1.0
        for attempt in range(FINAL_TRIES):
            if not retryable(outcomes):
                break
            seconds = base * 1.5 ** attempt
            if limit and time.monotonic() - started + seconds > limit:
                break
            self.rt.log.info(f"sync {self.ident}: the group is finished; asking again for what may still succeed "
                             f"in {seconds:.1f}s")
            self.rt.http.sleep(seconds)
            outcomes = self.run()
        total = counts.get("total") if isinstance(counts, dict) else None
        left = sum(1 for o in outcomes for f in o.failures if f.later)
        if left:
            self.rt.log.warn(f"sync {self.ident}: the group is finished, but {left} failure(s) may still succeed: "
                             f"run the same command again")
        else:
            self.rt.log.progress(f"sync {self.ident}: finished ({total} jobs) and synced")
        return outcomes

    def finished(self) -> dict[str, dict[str, Any]] | None:
        """The finished items of the last sync by id (None when it could not list them)."""
        until = self.sync.until
        if self.states is None or until is None:
            return None
        return {i: s for i, s in self.states.items() if until.finished(s)}

    def states_of(self, items: Any) -> dict[str, dict[str, Any]]:
        """The state of every item of an answer of the waiter (the enumeration's items)."""
        found: dict[str, dict[str, Any]] = {}
        for item in items if isinstance(items, list) else ():
            ident = item.get(self.sync.key) if isinstance(item, dict) else None
            if isinstance(ident, str) and ident:
                found[ident] = {f: item.get(f) for f in self.sync.state}
        return found

    def plain(self, name: str) -> Any:
        try:
            return self.process(self.pipeline(name), self.ident)
        except MultiFailure as exc:
            raise self.relabeled(name, exc) from None

    def relabeled(self, name: str, exc: MultiFailure) -> MultiFailure:
        return MultiFailure([replace(f, ident=f"{self.label(name)}:{f.ident}") for f in exc.failures], exc.value)

    def listed(self) -> dict[str, dict[str, Any]]:
        """The state of every item of the list section's file, just written, by id, in list
        order; an item's id is its ``key`` field, else the first of the list's other id fields
        that it has (``id``).  The file is read an item at a time (``base/jsonitems.py``: a
        10^6-job list is never in memory as a whole), and equal states are one dict."""
        target = self.rt.spec.section_action(self.compose.sections[self.sync.list])
        part = next(p for p in target.dimensions["group"].parts.values() if isinstance(p, PagedPart) and p.file)
        path = files.join_under(self.root, render_file(part.file or "", Context({"group": self.ident})))
        collection = part.pagination.collection or ""
        keys = [self.sync.key, *(k for k in part.pagination.id_keys if k != self.sync.key)]
        fields = self.sync.state
        states: dict[str, dict[str, Any]] = {}
        shared: dict[tuple[Any, ...], dict[str, Any]] = {}
        try:
            with open(path, encoding="utf-8") as handle:
                for item in jsonitems.items(handle, collection):
                    if not isinstance(item, dict):
                        continue
                    ident = next((item[k] for k in keys if isinstance(item.get(k), str)), None)
                    if not ident:
                        continue
                    values = tuple(item.get(f) for f in fields)
                    try:
                        state = shared.get(values)
                    except TypeError:  # a state value that is a list or an object: its own dict
                        state = dict(zip(fields, values, strict=True))
                    if state is None:
                        state = shared[values] = dict(zip(fields, values, strict=True))
                    states[ident] = state
        except jsonitems.MissingList:
            raise StepError(f"not fetched: the job list {path} has no {collection} list") from None
        except (OSError, ValueError) as exc:
            raise StepError(f"not fetched: --sync cannot read the job list {path}: {exc}") from None
        return states

    def announce(self, states: dict[str, dict[str, Any]], manifest: Manifest) -> None:
        new = sum(1 for i in states if i not in manifest.items)
        changed = sum(1 for i, s in states.items() if i in manifest.items and manifest.items[i].get("state") != s)
        self.rt.log.progress(f"sync {self.ident}: {len(states)} jobs, {new} new, {changed} changed, "
                             f"{len(states) - new - changed} unchanged")

    def scoped(self, name: str, plans: dict[str, list[str]], states: dict[str, dict[str, Any]],
               manifest: Manifest) -> Any:
        """One section for the items that changed; the items it finished go into the manifest."""
        changed = plans[name]
        until = self.sync.until
        # Files of the group as a whole (the export, the report summary) again only when a job
        # finished since the last sync (with the table's final statuses), else when one changed.
        keep = not any(until.finished(states[i]) for i in changed) if until is not None else not changed
        scope = Scope(changed, self.sync.binds, keep=keep)
        pipeline = self.pipeline(name, scope)
        failures: list[Failure] = []
        error: BaseException | None = None
        value: Any = None
        try:
            value = self.process(pipeline, self.ident)
        except (AuthError, Cancelled):
            raise
        except MultiFailure as exc:
            failures, error = exc.failures, self.relabeled(name, exc)
        except BenchloopError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - recorded as the section's failure, as the pool would
            error = as_error(exc, self.rt.log)
        done = scope.done if scope.itemized else set(changed) if error is None else set()
        failed = [*failures, *pipeline.item_failures]

        def item_of(failure: Failure) -> str | None:
            return next((i for i in changed if failure.ident == i or failure.ident.startswith(f"{i}:")), None)

        by_item: dict[str, list[Failure]] = {}
        for failure in failed:
            item = item_of(failure)
            if item is not None:
                by_item.setdefault(item, []).append(failure)
        # An item whose every failure is permanent is done for this section: its failures are
        # recorded and not asked again until the item changes; any other failure: not done.
        permanent = {i: fs for i, fs in by_item.items() if all(f.permanent for f in fs)}
        done = {i for i in done | set(permanent) if i not in by_item or i in permanent}
        relabeled = self.relabeled(name, MultiFailure(failures)).failures if failures else []
        recorded = {i: [{"id": r.ident, "message": r.message}
                        for f, r in zip(failures, relabeled, strict=True) if item_of(f) == i]
                    for i in permanent}
        manifest.record(name, states, done, scope.files, recorded)
        if isinstance(error, MultiFailure):
            rest = [r for f, r in zip(failures, relabeled, strict=True) if item_of(f) not in permanent]
            if not rest:
                return error.value  # permanent failures only: recorded and listed, not a failure
            raise MultiFailure([replace(r, later=not r.permanent) for r in rest], error.value)
        if error is not None:
            failure = failure_of(self.label(name), error)  # type: ignore[arg-type]
            raise MultiFailure([replace(failure, later=not failure.permanent)], None)
        return value
