"""Seeded random faults and HTTP ``Range`` answers of the sandbox.

Why a hash instead of one shared RNG: the client runs many worker threads, so
the order in which requests reach the sandbox changes from run to run.  A
shared ``random.Random`` would hand its draws to whichever request came
first, and two runs with the same seed would fault different requests.  Here
the decision for a request is a pure function of ``(seed, method, target,
occurrence)``, where *occurrence* counts how often that exact method and
target (path with query) were asked before.  The same client behaviour
therefore meets exactly the same faults in every run, whatever the thread
interleaving, and a retry of a faulted request gets a fresh, independent draw.

Kinds (``fault_kinds``):

* ``status``   - a 5xx JSON error (500, 502, 503 or 504);
* ``429``      - 429 with a small ``Retry-After`` (0 or 1 second);
* ``reset``    - the connection is aborted (RST) without an answer;
* ``truncate`` - the real status and ``Content-Length`` are sent, then half
  of the body, then the connection is closed;
* ``slow``     - the real answer, its body sent in pieces with pauses.

Requests that fail authentication are never faulted: a 401 must stay a 401.

``Range``: the binary endpoints (artifact proxy, pseudo-OSS artifacts and
exports) answer ``Range: bytes=N-`` / ``bytes=N-M`` with 206 and
``Content-Range: bytes N-M/T`` (416 with ``bytes */T`` past the end), so a
client can resume a cut download.  ``range_support=False`` ignores the
header and always sends the whole body with 200, like a server without
resume.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .handlers import Response, error_response, json_response

RATE_KINDS = ("status", "reset", "truncate", "429", "slow")
STATUS_CODES = (500, 502, 503, 504)
RETRY_AFTER = ("0", "1")
# Endpoints whose bodies are bytes and that honour Range (table names and pseudo-OSS).
RANGE_ENDPOINTS = frozenset({"job_artifact_download", "_oss", "_export"})

_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d+)\s*-\s*(\d*)\s*$")


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail: each with probability ``rate``, of one of ``kinds``."""

    rate: float = 0.0
    seed: int = 0
    kinds: tuple[str, ...] = RATE_KINDS
    slow_pause_s: float = 0.02

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("fault_rate must be between 0 and 1")
        unknown = [k for k in self.kinds if k not in RATE_KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"fault_kinds must be a non-empty subset of {RATE_KINDS}")

    def decide(self, method: str, target: str, occurrence: int) -> tuple[str, int] | None:
        """``(kind, n)`` for a faulted request (``n`` picks status/Retry-After), else None."""
        if self.rate <= 0.0:
            return None
        digest = hashlib.sha256(f"{self.seed}\0{method}\0{target}\0{occurrence}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2.0**64
        if draw >= self.rate:
            return None
        return self.kinds[digest[8] % len(self.kinds)], digest[9]


def fault_response(kind: str, n: int, resp: Response) -> Response:
    """The answer a faulted request gets instead of (or on top of) ``resp``."""
    if kind == "status":
        status = STATUS_CODES[n % len(STATUS_CODES)]
        return json_response({"error": f"injected fault: HTTP {status}"}, status)
    if kind == "429":
        return json_response({"error": "injected fault: HTTP 429"}, 429,
                             {"Retry-After": RETRY_AFTER[n % len(RETRY_AFTER)]})
    resp.fault = kind  # reset | truncate | slow: the server moves the bytes accordingly
    return resp


# -------------------------------------------------------------------- Range
def parse_range(value: str | None, total: int) -> tuple[int, int] | bool | None:
    """``(start, end)`` inclusive for a satisfiable single range; False when not
    satisfiable; None when there is no usable Range header (send everything)."""
    if not value:
        return None
    match = _RANGE.match(value)
    if not match:
        return None  # suffix ranges, multiple ranges: ignored, as RFC 9110 allows
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) else total - 1
    if start >= total or end < start:
        return False
    return start, min(end, total - 1)


def _slice(chunks: Iterable[bytes], start: int, stop: int) -> Iterator[bytes]:
    offset = 0
    for chunk in chunks:
        lo, hi = offset, offset + len(chunk)
        offset = hi
        if hi <= start:
            continue
        if lo >= stop:
            break
        yield chunk[max(0, start - lo): min(len(chunk), stop - lo)]


def apply_range(resp: Response, header: str | None) -> Response:
    """Turn a complete 200 answer into 206/416 for a ``Range`` request."""
    if resp.status != 200:
        return resp
    total = resp.length if resp.chunks is not None else len(resp.body)
    assert total is not None
    resp.headers.setdefault("Accept-Ranges", "bytes")
    wanted = parse_range(header, total)
    if wanted is None:
        return resp
    if wanted is False:
        out = error_response(416, "range not satisfiable", {"Content-Range": f"bytes */{total}"})
        out.fault = resp.fault
        return out
    assert isinstance(wanted, tuple)
    start, end = wanted
    headers = {**resp.headers, "Content-Range": f"bytes {start}-{end}/{total}"}
    if resp.chunks is not None:
        return Response(status=206, content_type=resp.content_type, headers=headers,
                        chunks=_slice(resp.chunks, start, end + 1), length=end - start + 1,
                        fault=resp.fault)
    return Response(status=206, body=resp.body[start:end + 1], content_type=resp.content_type,
                    headers=headers, fault=resp.fault)
