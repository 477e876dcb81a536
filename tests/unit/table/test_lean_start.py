"""What makes a start lean (issue 25) behaves as what it replaced.

* ``LazyMap``: the model's named entries are built on first read, once, under a lock.
* The registries of steps and combines import a module when its entry is first used.
* The compiled table is cached under the hash of its content; an edited table is never
  taken for the old one.
* The command tree is built lazily: a help page or a command builds only what it shows or runs.
* The global options are the meta app's: an option after the command is the command's when
  it declares it, else a global one (Cyclopts' fallthrough parse mode).

Timings live in benchmarks/ (``make bench``); ``test_perf_facts.py`` holds what a start imports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
from support import ROOT

from benchloop.table import load as specload
from benchloop.table.build import build_model
from benchloop.table.lazy import LazyMap, model_lock
from benchloop.table.load import load_spec


# ------------------------------------------------------------------ LazyMap
def test_a_lazy_map_builds_a_value_on_its_first_read_only():
    made: list[str] = []

    def make(key: str) -> list[str]:
        made.append(key)
        return [key]

    lazy = LazyMap(["a", "b", "c"], make, model_lock())
    assert list(lazy) == ["a", "b", "c"] and len(lazy) == 3 and "b" in lazy and "z" not in lazy
    assert made == [] and lazy.made == ()
    first = lazy["b"]
    assert lazy["b"] is first and lazy.get("b") is first and made == ["b"] and lazy.made == ("b",)
    with pytest.raises(KeyError):
        lazy["z"]
    with pytest.raises(TypeError):
        lazy["d"] = ["d"]  # type: ignore[index]
    assert dict(lazy) == {"a": ["a"], "b": ["b"], "c": ["c"]} and made == ["b", "a", "c"]


def test_threads_reading_one_entry_share_one_value():
    made: list[int] = []
    started = threading.Barrier(8)

    def make(key: str) -> object:
        made.append(1)
        time.sleep(0.01)  # long enough for every thread to ask meanwhile
        return object()

    lazy = LazyMap(["x"], make, model_lock())
    seen: list[object] = []

    def read() -> None:
        started.wait()
        seen.append(lazy["x"])

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len({id(value) for value in seen}) == 1


def test_the_model_builds_only_what_is_read():
    spec = build_model(load_spec())
    assert spec.resources.made == () and spec.endpoints.made == () and spec.schemas.shapes.made == ()
    assert spec.commands.made == ()
    action = spec.action("metrics", "get")
    assert spec.resources.made == ("metrics",) and spec.resources["metrics"].actions.made == ("get",)
    used = {part.request.name for dim in action.dimensions.values() for part in dim.parts.values()
            if getattr(part, "request", None) is not None}
    assert used and used <= set(spec.endpoints.made) and len(spec.endpoints.made) < len(spec.endpoints) / 4


_BUILT = r"""
import contextlib, io, json, sys
from benchloop.cli import commands
from benchloop.cli.app import main
from benchloop.table.load import load_model
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(json.loads(sys.argv[1]))
spec = load_model()
print("RESULT=" + json.dumps({
    "code": code, "page": out.getvalue(), "endpoints": len(spec.endpoints.made),
    "actions": {name: list(res.actions.made) for name, res in spec.resources.items() if res.actions.made},
    "resources_built": sorted(name for name in vars(commands) if name.startswith("res__"))}))
"""


def _built(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _BUILT, json.dumps(argv)], capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)
    line = next((line for line in done.stdout.splitlines() if line.startswith("RESULT=")), None)
    assert line is not None, done.stderr[-2000:]
    return json.loads(line[len("RESULT="):])


def test_the_root_help_page_builds_no_command():
    # Every resource and built-in is listed from what its registration says (lazy commands).
    built = _built(["--help"])
    assert built["code"] == 0 and "metrics" in built["page"] and "ap-cmd" in built["page"]
    assert built == {**built, "endpoints": 0, "actions": {}, "resources_built": []}


def test_a_page_builds_its_resource_only():
    built = _built(["metrics", "get", "--help"])
    assert built["code"] == 0 and "--scope" in built["page"]
    assert built["resources_built"] == ["res__metrics"] and list(built["actions"]) == ["metrics"]


# ------------------------------------------------------------- registries
_REGISTRY = r"""
import json, sys
from benchloop.engine.combines import COMBINES
from benchloop.engine.steps import STEPS
def loaded():
    return sorted(m.rsplit(".", 1)[1] for m in sys.modules
                  if m.startswith(("benchloop.engine.steps.", "benchloop.engine.combines.")))
before = loaded()
job_rows = STEPS["job_rows"]
after_one = loaded()
compare = COMBINES["compare"]  # implemented in comparison.py: found by loading the package's modules
try:
    STEPS["no_such_step"]
    missing = "found"
except KeyError:
    missing = "KeyError"
names = sorted(STEPS)
print(json.dumps({"before": before, "after_one": after_one, "job_rows": job_rows.__module__,
                  "compare": compare.__module__, "missing": missing, "names": names, "all": loaded()}))
"""


def test_a_step_module_is_imported_when_its_step_is_first_used():
    done = subprocess.run([sys.executable, "-c", _REGISTRY], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["before"] == ["registry", "registry"]  # the two registries, no implementation
    assert found["after_one"] == ["job_rows", "registry", "registry"]
    assert found["job_rows"] == "benchloop.engine.steps.job_rows"
    assert found["compare"] == "benchloop.engine.combines.comparison"
    assert found["missing"] == "KeyError"
    table = load_spec()
    assert found["names"] == sorted(table["steps"])
    assert {"ap_rebuild", "trace_export", "trace_media", "concat", "comparison"} <= set(found["all"])


def test_every_extension_point_is_one_registry_type():
    """Steps, combines, transforms, formats and the sandbox's handlers register one way."""
    from benchloop.base.registry import Registry
    from benchloop.engine.combines import COMBINES
    from benchloop.engine.formats import FORMATS
    from benchloop.engine.steps import STEPS
    from benchloop.engine.transforms import TRANSFORMS
    from benchloop.sandbox.handlers import HANDLERS

    for registry in (STEPS, COMBINES, TRANSFORMS, FORMATS, HANDLERS):
        assert isinstance(registry, Registry) and len(registry) > 0
    assert FORMATS["csv"].__name__ == "Csv" and "nope" not in FORMATS
    registry: Registry[object] = Registry()
    registry.register("a")(len)
    with pytest.raises(ValueError, match="'a' is registered twice"):
        registry.register("a")(max)
    assert dict(registry) == {"a": len}


# ------------------------------------------------------------- the compile cache
@pytest.fixture
def table_copy(tmp_path, monkeypatch):
    """The table and its schema in a directory of their own and an empty cache."""
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    for name in (specload.SPEC_NAME, specload.SCHEMA_NAME):
        shutil.copy(ROOT / "spec" / name, spec_dir / name)
    monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(spec_dir))
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(specload, "_MEMO", {})
    return spec_dir / specload.SPEC_NAME


def test_a_later_start_reads_the_compile_instead_of_compiling(table_copy, tmp_path, monkeypatch):
    first = load_spec()
    assert len(list((tmp_path / "cache").glob("spec-*.json"))) == 1
    specload._MEMO.clear()  # as a new process
    from benchloop.table import compiler

    def no_compiling(*args, **kwargs):
        raise AssertionError("the table was compiled again")

    monkeypatch.setattr(compiler, "compile_spec", no_compiling)
    assert load_spec() == first


def test_an_edit_that_keeps_the_size_and_the_times_is_still_seen(table_copy, tmp_path):
    assert "Run metrics of jobs" in json.dumps(load_spec())
    specload._MEMO.clear()
    text = table_copy.read_text(encoding="utf-8")
    stat = table_copy.stat()
    table_copy.write_text(text.replace("Run metrics of jobs", "Run metrics of JOBS", 1), encoding="utf-8")
    os.utime(table_copy, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same modification time
    assert table_copy.stat().st_size == stat.st_size and table_copy.stat().st_mtime_ns == stat.st_mtime_ns
    assert "Run metrics of JOBS" in json.dumps(load_spec())  # the content's hash differs
    assert len(list((tmp_path / "cache").glob("spec-*.json"))) == 2


# ------------------------------------------------------- global options
def test_a_global_option_after_the_command_is_still_global(api, sandbox, bl):
    result = bl("metrics", "get", "-j", "G1-J0001", "--host", sandbox.url, "--api-key", sandbox.api_key,
                "--retry", "0", "--no-pretty")
    assert result.code == 0, result.err
    assert result.out.startswith('[{"job_id":"G1-J0001"')


def test_an_option_the_command_declares_is_the_commands(api, tmp_path):
    result = api("metrics", "download", "-g", "G1", "-o", str(tmp_path / "own"), "-q")
    assert result.code == 0, result.err
    assert (tmp_path / "own" / "G1").is_dir()
    result = api("-o", str(tmp_path / "global"), "metrics", "download", "-g", "G1", "-q")
    assert result.code == 0, result.err
    assert (tmp_path / "global" / "G1").is_dir()


def test_config_set_takes_its_own_api_key_and_host(bl, tmp_path):
    config = tmp_path / "config.toml"
    result = bl("config", "set", "--api-key", "mine", "--host", "http://127.0.0.1:9", "--config", str(config))
    assert result.code == 0, result.err
    text = config.read_text(encoding="utf-8")
    assert "mine" in text and "http://127.0.0.1:9" in text


def test_after_a_double_dash_nothing_is_an_option(api):
    result = api("metrics", "get", "--", "-j", "G1-J0001")
    assert result.code == 2 and "-j" in result.err and result.out == ""


# ------------------------------------------------------------- big listings
class _Sink:
    """A stdout that keeps only the size and a hash of what it is given."""

    def __init__(self) -> None:
        import hashlib

        self.size, self.digest = 0, hashlib.sha256()

    def write(self, text: str) -> int:
        self.size += len(text)
        self.digest.update(text.encode("utf-8"))
        return len(text)


def _listing(jobs: int) -> list[dict]:
    return [{"group_id": "G1", "total": jobs, "jobs": [
        {"job_id": f"G1-J{n:05d}", "status": "succeeded", "score": n / 7, "tags": ["a", "é\n\""], "meta": {}}
        for n in range(jobs)]}, {"group_id": "G2", "total": 0, "jobs": []}]


@pytest.mark.parametrize("pretty", [True, False])
def test_a_big_listing_is_printed_as_json_dumps_prints_it_without_holding_it_as_text(pretty):
    import hashlib
    import tracemalloc

    from benchloop.base.jsontext import write_json_array

    elements = _listing(20_000)
    if pretty:
        expected = "[\n" + ",\n".join("  " + json.dumps(e, indent=2, ensure_ascii=False).replace("\n", "\n  ")
                                      for e in elements) + "\n]\n"
    else:
        expected = "[" + ",".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in elements) + "]\n"
    sink = _Sink()
    tracemalloc.start()
    try:
        write_json_array(sink, elements, pretty)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sink.size == len(expected) and sink.digest.hexdigest() == hashlib.sha256(expected.encode()).hexdigest()
    if pretty:  # the indented text was built whole, then copied indented: twice its size at once
        assert peak < len(expected) / 4, (peak, len(expected))
