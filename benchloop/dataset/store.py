"""Where the dataset lives, its schema version, and its partitions' paths.

The default place is the platform's per-user data directory (platformdirs'
``user_data_dir``: ``~/.local/share/benchloop/dataset`` on Linux, ``~/Library/Application
Support/benchloop/dataset`` on macOS, ``%LOCALAPPDATA%\\benchloop\\dataset`` on Windows):
the dataset is data the user keeps, not a cache that may be thrown away.  ``--dataset DIR``
or ``BENCHLOOP_DATASET`` put it elsewhere.

``dataset.json`` at the top holds the schema version of the layout and columns.  A
dataset written by a newer tool (a higher version) is refused with a usage error (exit 2)
before anything is read or written: an older tool could misread it or, worse, overwrite
what it does not know with less.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..base.errors import UsageError

SCHEMA_VERSION = 1
ENV = "BENCHLOOP_DATASET"
MANIFEST = "dataset.json"
TABLES = ("jobs", "steps", "runs")
PART = "part-0.parquet"
STAGING = ".staging"  # where partitions are written before their rename (parquet.write)


def default_dir() -> str:
    """The per-user data directory's ``dataset`` folder (platformdirs)."""
    import platformdirs

    return os.path.join(platformdirs.user_data_dir("benchloop", appauthor=False), "dataset")


def location(given: str | os.PathLike[str] | None = None) -> str:
    """``given`` (``--dataset``), else ``$BENCHLOOP_DATASET``, else :func:`default_dir`."""
    if given:
        return os.path.abspath(os.path.expanduser(os.fspath(given)))
    env = os.environ.get(ENV)
    if env:
        return os.path.abspath(os.path.expanduser(env))
    return default_dir()


def read_manifest(root: str) -> dict[str, Any] | None:
    """The dataset's ``dataset.json`` (None when there is none yet); a newer schema is refused."""
    path = os.path.join(root, MANIFEST)
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"dataset {root}: cannot read {MANIFEST}: {exc}") from None
    version = manifest.get("schema_version") if isinstance(manifest, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise UsageError(f"dataset {root}: {MANIFEST} has no schema_version: not a dataset of bl")
    if version > SCHEMA_VERSION:
        raise UsageError(f"dataset {root} has schema version {version}, newer than this bl reads "
                         f"({SCHEMA_VERSION}): upgrade benchloop-client, or use another --dataset")
    return manifest


def ensure(root: str) -> dict[str, Any]:
    """Make the dataset at ``root`` if it is new (its folder and ``dataset.json``); its manifest."""
    from ..base.files import write_json_file
    from ..version import __version__

    manifest = read_manifest(root)
    if manifest is None:
        os.makedirs(root, exist_ok=True)
        manifest = {"schema_version": SCHEMA_VERSION, "written_by": f"benchloop-client {__version__}"}
        write_json_file(os.path.join(root, MANIFEST), manifest)
    return manifest


def partition(root: str, table: str, group: str) -> str:
    """The Parquet file of ``group`` in ``table`` (``table/group_id=G/part-0.parquet``)."""
    return os.path.join(root, table, f"group_id={_value(group)}", PART)


def staging(root: str) -> str:
    return os.path.join(root, STAGING)


def state_path(root: str, group: str) -> str:
    return os.path.join(root, "state", f"group_id={_value(group)}.json")


def _value(group: str) -> str:
    """A group id as a hive partition value: percent-encoded where a path or hive needs it
    (what Spark and DuckDB decode back: ``/``, ``=``, ``%`` and the other special characters)."""
    from urllib.parse import quote

    return quote(group, safe=" -_.~!$&'()*+,;:@") if group not in ("", ".", "..") else quote(group) or "%00"


def groups(root: str, table: str = "jobs") -> list[str]:
    """The groups that have a partition in ``table``, sorted."""
    from urllib.parse import unquote

    folder = os.path.join(root, table)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(unquote(n[len("group_id="):]) for n in names
                  if n.startswith("group_id=") and os.path.isfile(os.path.join(folder, n, PART)))


def read_state(root: str, group: str) -> dict[str, Any]:
    try:
        with open(state_path(root, group), encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(root: str, group: str, state: dict[str, Any]) -> None:
    from ..base.files import write_json_file

    write_json_file(state_path(root, group), state, pretty=False)
