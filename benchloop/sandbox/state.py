"""Mutable state of a running sandbox: counters, request log, flows, faults.

Why separate from the dataset: the dataset is immutable and shared, while a
few endpoints are little state machines (the trace export goes
waiting_for_data -> running -> succeeded, RSI and behaviour analyses move from
creating to created/Finished once triggered) and tests want to see what the
client sent.  All of it lives here behind one lock, so handlers stay simple
and ``Sandbox.reset_stats()`` / ``reset_state()`` have one place to clear.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

LOG_LIMIT = 2000
ANSWER_LIMIT = 256 * 1024  # larger JSON answers are logged without their body


class Headers(dict):
    """Request headers with lower-cased keys; lookups are case-insensitive."""

    def __init__(self, items=()):
        super().__init__((str(k).lower(), v) for k, v in items)

    def __getitem__(self, key):
        return super().__getitem__(str(key).lower())

    def __contains__(self, key):
        return super().__contains__(str(key).lower())

    def get(self, key, default=None):
        return super().get(str(key).lower(), default)


class _Received(NamedTuple):
    method: str
    path: str  # path with query, exactly as received
    headers: Headers


class LoggedRequest(_Received):
    """One request as received: unpacks as ``(method, path, headers)``; ``body`` holds its bytes.

    Once answered, ``status`` and ``content_type`` say how, and ``answer`` holds the body of a
    JSON answer (None for bytes, streams and answers over ``ANSWER_LIMIT``: the log is bounded in
    entries, this bounds it in bytes), so tests can check answers against the table.
    """

    body: bytes
    status: int | None
    content_type: str | None
    answer: bytes | None

    def __new__(cls, method: str, path: str, headers: Headers, body: bytes = b""):
        entry = super().__new__(cls, method, path, headers)
        entry.body = body
        entry.status = entry.content_type = entry.answer = None
        return entry

    def answered(self, status: int, content_type: str, body: bytes | None) -> None:
        self.status, self.content_type = status, content_type
        kept = body is not None and content_type.startswith("application/json") and len(body) <= ANSWER_LIMIT
        self.answer = body if kept else None


@dataclass
class Fault:
    """An injected failure: answer ``status`` (with Retry-After), reset, truncate or slow."""

    endpoint: str | None
    kind: str = "status"  # status | reset | truncate | slow
    status: int = 503
    retry_after: float | None = None
    remaining: int = 1


@dataclass
class Export:
    creates: int = 0
    name: str | None = None
    polls: int = 0
    done: bool = False


@dataclass
class State:
    export_waiting: int = 1
    export_running: int = 1
    behavior_running_polls: int = 1
    endpoint_names: tuple[str, ...] = ()  # counted from 0, so every key exists
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.in_flight = 0  # requests being answered right now (not reset with the stats)
        self.reset_stats()
        self.reset_flows()

    # ----------------------------------------------------------------- stats
    def reset_stats(self) -> None:
        with self.lock:
            self.counters: Counter[str] = Counter(dict.fromkeys(
                ("connections", "requests", "max_in_flight", "unauthorized", "not_found", "_export",
                 "_oss", "_sso", "faults", "range_requests", *self.endpoint_names), 0))
            self.triggers: list[dict[str, Any]] = []
            self.posts: list[dict[str, Any]] = []
            self.log: deque[LoggedRequest] = deque(maxlen=LOG_LIMIT)
            self.first_request_at: float | None = None  # time.monotonic(), since the last reset
            self.last_answer_at: float | None = None

    def count(self, key: str, by: int = 1) -> None:
        with self.lock:
            self.counters[key] += by

    def enter(self) -> None:
        """A request is being answered; ``max_in_flight`` keeps the peak since the last reset."""
        with self.lock:
            self.in_flight += 1
            if self.in_flight > self.counters["max_in_flight"]:
                self.counters["max_in_flight"] = self.in_flight

    def leave(self) -> None:
        """A request was answered (or failed to be): the time of the last answer since the last reset."""
        with self.lock:
            self.in_flight -= 1
            self.last_answer_at = time.monotonic()

    def record_request(self, entry: LoggedRequest) -> None:
        with self.lock:
            self.counters["requests"] += 1
            self.log.append(entry)
            if self.first_request_at is None:
                self.first_request_at = time.monotonic()

    def record_post(self, endpoint: str, params: dict, body: Any, trigger: bool) -> None:
        item = {"endpoint": endpoint, "params": dict(params), "body": copy.deepcopy(body)}
        with self.lock:
            self.posts.append(item)
            if trigger:
                self.triggers.append(item)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            out: dict[str, Any] = dict(self.counters)
            out["first_request_monotonic"] = self.first_request_at
            out["last_answer_monotonic"] = self.last_answer_at
            out["triggers"] = copy.deepcopy(self.triggers)
            out["posts"] = copy.deepcopy(self.posts)
            return out

    def requests_log(self) -> list[LoggedRequest]:
        with self.lock:
            return list(self.log)

    # ----------------------------------------------------------------- flows
    def reset_flows(self) -> None:
        with self.lock:
            self.exports: dict[str, Export] = {}
            self.rsi: dict[tuple[str, str], dict[str, Any]] = {}
            self.behavior: dict[str, dict[str, Any]] = {}
            self.behavior_counter = 0
            self.faults: list[Fault] = []
            self.occurrences: dict[tuple[str, str], int] = {}

    def export_create(self, group_id: str) -> tuple[str, str | None]:
        """Next answer of the export create call: (status, job name)."""
        with self.lock:
            exp = self.exports.setdefault(group_id, Export())
            exp.creates += 1
            if exp.done:
                return "succeeded", exp.name
            if exp.creates <= self.export_waiting:
                return "waiting_for_data", None
            if exp.name is None:
                exp.name = f"trace-export-{group_id}-{len(self.exports)}"
            if self.export_running <= 0:
                exp.done = True
                return "succeeded", exp.name
            return "running", exp.name

    def export_poll(self, group_id: str, name: str) -> str | None:
        """Next answer of the status poll, None for an unknown export."""
        with self.lock:
            exp = self.exports.get(group_id)
            if exp is None or exp.name != name:
                return None
            exp.polls += 1
            if exp.done or exp.polls > self.export_running:
                exp.done = True
                return "succeeded"
            return "running"

    def rsi_get(self, key: tuple[str, str], initial: str) -> tuple[str, dict | None]:
        with self.lock:
            entry = self.rsi.get(key)
            if entry is None:
                return initial, None
            status = entry["status"]
            if status == "creating":
                entry["status"] = "created"  # one look while creating, then done
            return status, entry["request"]

    def rsi_trigger(self, key: tuple[str, str], request: dict) -> None:
        with self.lock:
            self.rsi[key] = {"status": "creating", "request": request}

    def behavior_add(self, task: dict[str, Any], preset_uid: str | None = None) -> dict[str, Any]:
        with self.lock:
            if preset_uid is None:
                self.behavior_counter += 1
                uid = f"uid-{self.behavior_counter}"
            else:
                uid = preset_uid
            task = {"uid": uid, **task, "polls": 0}
            self.behavior[uid] = task
            return dict(task)

    def behavior_get(self, uid: str, poll: bool) -> dict[str, Any] | None:
        with self.lock:
            task = self.behavior.get(uid)
            if task is None:
                return None
            if poll and task["status"] == "Running":
                task["polls"] += 1
                if task["polls"] > self.behavior_running_polls:
                    task["status"] = "Finished"
            return dict(task)

    def behavior_of_group(self, group_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(t) for t in self.behavior.values() if t["groupId"] == group_id]

    # ---------------------------------------------------------------- faults
    def occurrence(self, method: str, target: str) -> int:
        """How many times ``method target`` was seen before this request (0 the first time)."""
        with self.lock:
            key = (method, target)
            seen = self.occurrences.get(key, 0)
            self.occurrences[key] = seen + 1
            return seen

    def add_fault(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)

    def take_fault(self, endpoint: str | None) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.endpoint is None or fault.endpoint == endpoint:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self.faults.remove(fault)
                    return fault
        return None
