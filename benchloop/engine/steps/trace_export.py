"""The group trace-trajectory export, reassembled and streamed (docs/contract.md 2.7).

1. The part's waiter (``wait:`` in the table, see ``polling.py``) asks the
   backend for the group's export until it has a download URL, bounded by
   ``--download-timeout``; that URL is this step's input.
2. Download the export (gzip or plain JSON lines) to a temp file on the
   output volume; the API key is not sent to its host unless it is the
   backend's own origin.
3. Read the group's ordered job ids into an on-disk SQLite index.
4. Spool rows into the same index keyed by (job, row order), then write
   ``{"group_id", "trajectories": [{"job_id", "trajectory"}]}`` job by job.
   Memory stays constant whatever the export size and the number of jobs: one
   row at a time is decoded, and the output is byte-identical to
   ``json.dumps(indent=2)``.

Rows of jobs that the job-id list does not know are kept after the known
jobs, in first-appearance order, as the reference client does, with a warning
that counts them; an export none of whose rows is of a listed job is another
group's, and fails the group.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from ...base.errors import StepError
from ...base.expressions import compile_expression
from ...base.files import atomic_write_stream, staging_dir
from ...base.jsontext import encode
from ..stepcall import StepCall
from .registry import WRITTEN, step

ROW_INDENT = " " * 8  # a row's depth in {"trajectories": [{"trajectory": [row]}]}
BATCH_CHARS = 1 << 20  # rendered rows collected before one insert (5,000 rows of a real export: ~8 MB)


def job_ids(call: StepCall) -> list[str]:
    body = call.request("job_ids")
    ids = body.get("job_ids", []) if isinstance(body, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise StepError("group job-ids response must carry job_ids as a list of non-empty strings")
    return ids  # repeats are dropped by RowIndex (the first one counts)


def _lines(path: str) -> Iterator[tuple[int, str]]:
    with open(path, "rb") as raw:
        magic = raw.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as binary:
        text = io.TextIOWrapper(binary, encoding="utf-8-sig")
        for number, line in enumerate(text, 1):
            if line.strip():
                yield number, line


def _row_job(row: Any, number: int, expression: Any) -> str:
    """The job of an export row: the table's ``row_job`` expression (its field and aliases)."""
    if not isinstance(row, dict):
        raise StepError(f"trace trajectory row at line {number} is not an object")
    value = expression(row)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise StepError("trace trajectory row is missing job_id")


class RowIndex:
    """Rows on disk, grouped by job in the export's job order; the job order on disk too.

    Each row is decoded once (to find its job) and stored already rendered as
    it will be written: pretty rows indented for their place in the document,
    so writing needs no second decode and encode.  The ordered job ids live in
    the database as well (a 20,000-job group's ids held ~2 MB the whole time):
    ``jobs`` numbers them in the order given (the first of repeated ids counts),
    and rows name their job, so memory holds one batch of rows, never the group.
    Job ids are stored as UTF-8 bytes with ``surrogatepass``: a backend may
    send a lone surrogate, and it must come back as it went in.
    """

    def __init__(self, directory: str, ids: Iterable[str], pretty: bool = False, row_job: Any = None):
        self.row_job = row_job or compile_expression("job_id || jobId || JobId", "row_job")
        self.pretty = pretty
        self.path = os.path.join(directory, "rows.sqlite")
        try:
            self.db = sqlite3.connect(self.path)
        except sqlite3.Error as exc:
            raise _index_error(directory, exc) from None
        try:
            self.db.execute("PRAGMA journal_mode=OFF")
            self.db.execute("PRAGMA synchronous=OFF")
            self.db.execute("PRAGMA cache_size=-512")  # KiB: the index is read in order, job by job
            self.db.execute("CREATE TABLE jobs (ord INTEGER PRIMARY KEY, id BLOB UNIQUE)")
            self.db.execute("CREATE TABLE rows (job BLOB, seq INTEGER, row TEXT)")
            self.db.executemany("INSERT OR IGNORE INTO jobs (id) VALUES (?)", ((_key(job),) for job in ids))
        except sqlite3.Error as exc:  # a full disk under the output root
            self.db.close()
            raise _index_error(directory, exc) from None

    def load(self, export: str) -> None:
        try:
            self._load(export)
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
            raise StepError(f"trace trajectory export is corrupt: {type(exc).__name__}: {exc}") from None
        except sqlite3.Error as exc:  # a full disk under the output root
            raise _index_error(os.path.dirname(self.path), exc) from None

    def _load(self, export: str) -> None:
        batch = []
        size = 0
        for seq, (number, line) in enumerate(_lines(export)):
            try:
                row = json.loads(line)
            except ValueError:
                raise StepError(f"invalid trace trajectory JSON at line {number}") from None
            text = self.render(row)
            batch.append((_key(_row_job(row, number, self.row_job)), seq, text))
            size += len(text)
            if size >= BATCH_CHARS or len(batch) >= 5000:
                self.db.executemany("INSERT INTO rows VALUES (?, ?, ?)", batch)
                batch.clear()
                size = 0
        if batch:
            self.db.executemany("INSERT INTO rows VALUES (?, ?, ?)", batch)
        self.db.execute("CREATE INDEX rows_job ON rows (job, seq)")
        self.db.commit()

    def counts(self) -> tuple[int, int, int, int]:
        """(jobs listed, rows, rows of listed jobs, jobs only rows name)."""
        listed, = self.db.execute("SELECT COUNT(*) FROM jobs").fetchone()
        rows, known, others = self.db.execute(  # one pass over the rows
            "SELECT COUNT(*), COUNT(jobs.id), COUNT(DISTINCT CASE WHEN jobs.id IS NULL THEN rows.job END) "
            "FROM rows LEFT JOIN jobs ON jobs.id = rows.job").fetchone()
        return listed, rows, known, others

    def render(self, row: Any) -> str:
        if self.pretty:
            return encode(row, True).replace("\n", "\n" + ROW_INDENT)
        return encode(row, False)

    def jobs(self) -> Iterator[str]:
        """The jobs of the document: the listed ones in their order, then the jobs only rows
        name, in the order of their first row (as the reference client does)."""
        for (key,) in self.db.execute("SELECT id FROM jobs ORDER BY ord"):
            yield _name(key)
        unknown = self.db.execute("SELECT job FROM rows WHERE job NOT IN (SELECT id FROM jobs) "
                                  "GROUP BY job ORDER BY MIN(seq)")
        for (key,) in unknown:
            yield _name(key)

    def texts(self, job: str) -> Iterator[str]:
        cursor = self.db.execute("SELECT row FROM rows WHERE job = ? ORDER BY seq", (_key(job),))
        for (text,) in cursor:
            yield text

    def rows(self, job: str) -> Iterator[Any]:
        for text in self.texts(job):
            yield json.loads(text)

    def close(self) -> None:
        self.db.close()


def _index_error(directory: str, exc: Exception) -> StepError:
    return StepError(f"cannot index the trace export in {directory}: {exc}")


def _key(job: str) -> bytes:
    return job.encode("utf-8", "surrogatepass")


def _name(key: bytes) -> str:
    return key.decode("utf-8", "surrogatepass")


def write_document(out, group_id: str, index: RowIndex, pretty: bool) -> None:
    """Write the export document job by job; equal to json.dumps(doc, indent=2).

    ``index`` must have been built with the same ``pretty`` setting."""
    if not pretty:
        out.write('{"group_id":' + encode(group_id, False) + ',"trajectories":[')
        for n, job in enumerate(index.jobs()):
            out.write(("," if n else "") + '{"job_id":' + encode(job, False) + ',"trajectory":[')
            for m, text in enumerate(index.texts(job)):
                out.write(("," if m else "") + text)
            out.write("]}")
        out.write("]}\n")
        return
    out.write('{\n  "group_id": ' + encode(group_id, False) + ",\n  \"trajectories\": ")
    empty = True
    for job in index.jobs():
        out.write("[\n" if empty else ",\n")
        empty = False
        out.write('    {\n      "job_id": ' + encode(job, False) + ',\n      "trajectory": ')
        first = True
        for text in index.texts(job):
            out.write("[\n" if first else ",\n")
            first = False
            out.write(ROW_INDENT + text)
        out.write("[]\n" if first else "\n      ]\n")
        out.write("    }")
    out.write("[]\n}\n" if empty else "\n  ]\n}\n")


def check_rows(call: StepCall, index: RowIndex) -> None:
    """An export none of whose rows is of a job the group lists is another group's: the group
    fails, nothing is written.  Rows of jobs the list does not name are kept (after the listed
    jobs, as the reference client does), and counted in a warning."""
    listed, rows, known, others = index.counts()
    if listed and rows and not known:
        raise StepError(f"the export's {rows} row(s) name none of the group's {listed} job(s): "
                        "another group's export, not saved")
    if others:
        call.log.warn(f"{call.ident}: {rows - known} export row(s) of {others} job(s) the group's job list "
                      "does not name, kept after its jobs")


@step("trace_export")
def trace_export(call: StepCall) -> Any:
    """Reassemble the export file whose URL the part's waiter produced (``call.input``)."""
    dest = call.dest
    root = os.path.dirname(dest) if dest else call.root
    os.makedirs(root or ".", exist_ok=True)
    with staging_dir(root or ".", ".trace-trajectory-") as work:  # locked while it lives; dead runs' swept
        export = os.path.join(work, "export.bin")
        call.download(call.input, export)
        index = RowIndex(work, job_ids(call), pretty=bool(dest) and call.pretty,
                         row_job=call.params.expression("row_job"))
        try:
            index.load(export)
            os.unlink(export)
            check_rows(call, index)
            if dest:
                atomic_write_stream(dest, lambda out: write_document(out, call.ident, index, call.pretty))
                call.log.file("wrote", dest)
                return WRITTEN
            return {
                "group_id": call.ident,
                "trajectories": [{"job_id": job, "trajectory": list(index.rows(job))} for job in index.jobs()],
            }
        finally:
            index.close()
