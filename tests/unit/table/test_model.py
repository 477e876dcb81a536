"""The typed model: immutable all the way down, one kind per part, names resolved explicitly."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import msgspec
import pytest

from benchloop.table.build import build_model
from benchloop.table.load import load_model, load_spec
from benchloop.table.model import (
    ArchiveEntry,
    Endpoint,
    Enumeration,
    FanOutPart,
    PagedPart,
    RequestPart,
    StepArgs,
    StepPart,
    WaitPart,
)
from benchloop.table.optiontypes import TYPES


def walk(value: Any, path: str, seen: set[int]) -> list[tuple[str, Any]]:
    """Every object reachable from ``value``, with where it was found."""
    if id(value) in seen or isinstance(value, (str, int, float, bool, type(None), type)):
        return []
    seen.add(id(value))
    found = [(path, value)]
    if isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            found += walk(getattr(value, name), f"{path}.{name}", seen)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            found += walk(item, f"{path}[{key!r}]", seen)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for index, item in enumerate(value):
            found += walk(item, f"{path}[{index}]", seen)
    return found


def test_no_mutable_container_anywhere_in_the_model():
    reached = walk(load_model(), "spec", set())
    assert len(reached) > 1000  # the whole table, not a stub
    mutable = [path for path, value in reached if isinstance(value, (list, dict, set))]
    assert mutable == []


def test_mutating_any_part_of_the_cached_model_fails():
    reached = walk(load_model(), "spec", set())
    for _path, value in reached:
        if isinstance(value, msgspec.Struct):
            name = value.__struct_fields__[0]
            with pytest.raises(AttributeError):
                setattr(value, name, None)
        elif isinstance(value, Mapping):
            with pytest.raises(TypeError):
                value["new key"] = 1  # type: ignore[index]
            if isinstance(value, StepArgs):
                with pytest.raises(AttributeError):
                    value._values = {}  # type: ignore[misc]


def test_a_step_list_cannot_be_changed_for_the_next_caller():
    """ap-cmd's cluster list once changed the cached model when a step appended to it."""
    part = load_model().action("ap-cmd", "ap-cmd").dimensions["group"].parts["command"]
    assert isinstance(part, StepPart)
    clusters = part.params.texts("clusters")
    assert isinstance(clusters, tuple) and "sg-prod-2" in clusters
    with pytest.raises(AttributeError):
        clusters.append("mine")  # type: ignore[attr-defined]
    assert isinstance(part.params, StepArgs) and not isinstance(part.params, MappingProxyType)


def test_each_part_has_its_kind():
    spec = load_model()
    kinds = {type(p).__name__ for a in spec.actions for d in a.dimensions.values() for p in d.parts.values()}
    assert kinds == {"RequestPart", "PagedPart", "FanOutPart", "StepPart", "WaitPart", "ArchiveEntry"}
    assert isinstance(spec.action("jobs", "get").dimensions["group"].parts["all"], PagedPart)
    waits = spec.action("jobs", "wait").dimensions["group"].parts["jobs"]
    assert isinstance(waits, WaitPart) and waits.wait is spec.waiters["group_jobs_done"]
    export = spec.action("trajectory", "get").dimensions["group"].parts["trajectory"]
    assert isinstance(export, StepPart) and export.wait is spec.waiters["trace_export"]
    assert isinstance(spec.action("report", "download").dimensions["group"].parts["jobs"], FanOutPart)
    assert isinstance(spec.action("report", "get").dimensions["job"].parts["report"], RequestPart)
    entry = spec.action("trajectory", "download").dimensions["task"].parts["source"]
    assert isinstance(entry, ArchiveEntry) and isinstance(entry.part, StepPart) and entry.failures == "source_failures"
    # A kind has only the fields it uses.
    assert not hasattr(RequestPart, "each") and not hasattr(PagedPart, "params") and not hasattr(FanOutPart, "wait")


def test_step_values_are_typed_by_the_declaration_not_by_coincidence():
    data = load_spec()
    artifacts = data["resources"]["artifacts"]["actions"]["download"]["dimensions"]["group"]["parts"]["artifacts"]
    params = build_model(data).action("artifacts", "download").dimensions["group"].parts["artifacts"].params
    assert isinstance(params.enumeration("enumerate"), Enumeration)
    assert isinstance(params.endpoint("listing"), Endpoint)
    assert params.text("layout") == artifacts["with"]["layout"]
    # A text value that happens to be an enumeration's or an endpoint's name stays text.
    job = build_model(data).action("ap-cmd", "ap-cmd").dimensions["group"].parts["command"]
    assert isinstance(job, StepPart) and job.params.text("cluster_env") == "AP_CLUSTER"
    copy = {**data, "resources": dict(data["resources"])}
    ap = copy["resources"]["ap-cmd"] = {**data["resources"]["ap-cmd"]}
    ap["actions"] = {"ap-cmd": {**data["resources"]["ap-cmd"]["actions"]["ap-cmd"]}}
    act = ap["actions"]["ap-cmd"]
    act["dimensions"] = {"group": {"parts": {"command": {
        **act["dimensions"]["group"]["parts"]["command"],
        "with": {**act["dimensions"]["group"]["parts"]["command"]["with"], "cluster_env": "group_jobs"}}}}}
    part = build_model(copy).action("ap-cmd", "ap-cmd").dimensions["group"].parts["command"]
    assert isinstance(part, StepPart) and part.params.text("cluster_env") == "group_jobs"


def test_every_option_type_is_described_once():
    spec = load_model()
    used = {o.type for o in spec.global_options} | {o.type for a in spec.actions for o in a.options}
    used |= {o.type for c in spec.command_leaves for o in (*c.options, *c.arguments)}
    assert used <= set(TYPES)
    assert TYPES["ints"].schema() == {"type": "array", "items": {"type": "integer"}}
    assert TYPES["choice"].annotation(("a", "b")) == "Literal['a', 'b']"
    assert TYPES["ids"].annotation() == "str | Sequence[str] | None"
    assert TYPES["flag"].value_name is None and TYPES["float"].metavar == "NUMBER"


def test_the_default_service_settings_come_from_the_table():
    service = load_model().default_service
    assert service.base_url.flag == "--host" and "BENCHLOOP_HOST" in service.base_url.env
    assert service.key.env == ("BENCHLOOP_API_KEY", "BENCHMARK_API_KEY") and service.key.config == "api_key"


def test_the_changes_ap_cmd_declares_are_options_of_the_command_and_fields_of_changes():
    import dataclasses as dc

    from benchloop.engine.steps.ap_rebuild import Changes

    action = load_model().action("ap-cmd", "ap-cmd")
    part = action.dimensions["group"].parts["command"]
    assert isinstance(part, StepPart)
    named = [*part.params.texts("changes"), *part.params.texts("json_changes")]
    assert sorted(named) == sorted(f.name for f in dc.fields(Changes))
    assert all(action.option(name) is not None for name in named)
