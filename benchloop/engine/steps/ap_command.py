"""``ap-cmd``: rebuild the AgentPlatform ``ap job create`` command of a group (docs/contract.md 1.5).

The order is the contract's: the cluster (``@CLUSTER``, ``--ap-cluster``,
``AP_CLUSTER``, else the cluster Benchloop records for the group, which only
warns when it fails), the AgentPlatform key (a usage error when missing),
the group (looked up on the cluster, or discovered on the table's list of
clusters, moving on only on 404), then ``--params``/``--overrides`` (parsed
only now: a 404 wins over invalid JSON), the profile or the template and the
sample job, and the text.  Every request goes through ``call.request`` with an
endpoint of ``with:``; the reconstruction itself is ``ap_rebuild.py``.

``with:`` keys: ``group``, ``profile``, ``template``, ``jobs``, ``job``,
``dataset`` (AgentPlatform endpoints), ``lookup`` (the Benchloop group),
``clusters`` (discovery order), ``cluster_env``, ``cluster_required`` (the
usage error), ``default_batch_size``, ``per_instance`` (keys never inferred).
"""

from __future__ import annotations

import os
from typing import Any

from ...base.errors import ApiError, AuthError, BenchloopError, Cancelled, StepError, UsageError
from ..stepcall import StepCall
from .ap_rebuild import (
    BuildError,
    Changes,
    apply_changes,
    check_extras,
    infer_params,
    merge_extras,
    overrides_vs_template,
    parse_json_option,
    plain_segments,
    profile_segments,
    render,
    shown,
    split_target,
    valid_cluster,
)
from .registry import step


@step("ap_command")
def ap_command(call: StepCall) -> str:
    params = call.params
    opts = call.options
    clusters = list(params.texts("clusters"))
    group_id, at_cluster = split_target(call.ident)
    cluster = at_cluster or opts.get("ap_cluster") or os.environ.get(params.text("cluster_env")) or None
    if cluster and not valid_cluster(cluster):
        raise UsageError(f"invalid AgentPlatform cluster {shown(cluster)}: a cluster name is visible ASCII "
                         f"without spaces")
    recorded = None  # the cluster as Benchloop records the group, when it comes from there
    if not cluster and call.has_key("lookup"):
        cluster = recorded = benchloop_cluster(call, group_id)
    cluster = cluster.lower() if cluster else None
    flag = opts.get("ap_cluster")
    if at_cluster and flag and at_cluster.lower() != flag.lower():
        call.log.warn(f"cluster '{at_cluster.lower()}' from group_id@cluster overrides --ap-cluster '{flag.lower()}'")
    call.require_key("group")
    if not cluster:
        raise UsageError(params.text("cluster_required"))
    if recorded and not valid_cluster(recorded):
        # bad data (a CR/LF used to fail in the X-CLUSTER header, reported as a network error)
        raise StepError(f"Benchloop group {group_id} records an invalid cluster {shown(recorded)}: "
                        f"a cluster name is visible ASCII without spaces")
    group, cluster = find_group(call, group_id, cluster, at_cluster is not None, clusters)
    try:
        values = {name: opts.get(name) for name in params.texts("changes")}
        values.update({name: parse_json_option(opts.get(name)) for name in params.texts("json_changes")})
        changes = Changes(**values)
        check_extras(list(opts.get("extra_args") or ()))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    notes: list[str] = []
    try:
        segments = build(call, group_id, group, cluster, changes, clusters, notes)
        text = render(cluster, merge_extras(segments, list(opts.get("extra_args") or ())))
    except (AuthError, Cancelled):
        raise
    except BenchloopError as exc:
        raise StepError(f"failed to build command: {_plain(exc)}", exc.network) from None
    except (BuildError, TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise StepError(f"failed to build command: {exc}") from None
    for note in notes:
        call.log.warn(note)
    return text


def _plain(exc: BenchloopError) -> str:
    """A transport error without the ``network:`` prefix (ap-cmd prints the bare reason)."""
    return str(exc).removeprefix("network: ") if exc.network else str(exc)


def benchloop_cluster(call: StepCall, group_id: str) -> str | None:
    """The cluster Benchloop records for the group; any failure is only a warning."""
    try:
        body = call.request("lookup", group=group_id)
    except Cancelled:
        raise
    except BenchloopError as exc:
        call.log.warn(f"failed to resolve cluster from Benchloop group {group_id}: {exc}")
        return None
    cluster = body.get("cluster") if isinstance(body, dict) else None
    if not cluster:
        call.log.warn(f"Benchloop group {group_id} does not include cluster")
        return None
    return str(cluster)


def find_group(call: StepCall, group_id: str, cluster: str, pinned: bool, clusters: list[str]) -> tuple[dict, str]:
    """``(group, cluster)``: on the pinned cluster, or the first of the resolved cluster and the
    table's clusters that does not answer 404.  A refused key (exit 3) stops the search."""
    order = [cluster] if pinned else [cluster, *(c for c in clusters if c != cluster)]
    for candidate in order:
        try:
            body = call.request("group", group=group_id, cluster=candidate)
        except (AuthError, Cancelled):
            raise
        except ApiError as exc:
            if exc.status == 404 and pinned:
                raise StepError(f"group '{group_id}' not found on cluster '{cluster}'.") from None
            if exc.status == 404:
                continue
            raise StepError(f"failed to fetch group {group_id}: {exc}") from None
        except BenchloopError as exc:  # the transport's own words, as the official client prints them
            raise StepError(f"failed to fetch group {group_id}: {_plain(exc)}", exc.network) from None
        if not isinstance(body, dict):
            raise StepError(f"failed to fetch group {group_id}: the group is not a JSON object")
        return body, candidate
    raise StepError(f"group '{group_id}' not found on any known cluster.\n"
                    f"Hint: if the group is on an unlisted cluster, specify it with: bl ap-cmd {group_id}@<cluster_name>\n"
                    f"Searched on AgentPlatform ({call.params.endpoint('group').path}), in this order: "
                    f"{', '.join(order)}. ap-cmd takes the id of an AgentPlatform group, the one a "
                    "benchmark group was submitted as.")


def build(call: StepCall, group_id: str, group: dict, cluster: str, changes: Changes, clusters: list[str],
          notes: list[str]) -> list[str]:
    batch = call.params.integer("default_batch_size")
    if group.get("profile_id"):
        version = group.get("profile_version")
        profile = call.request("profile", profile=group["profile_id"], version=version, cluster=cluster)
        if not isinstance(profile, dict):
            raise BuildError("the profile is not a JSON object")
        if version is not None:
            profile = {**profile, "version": version}
        return profile_segments(group, profile, changes, batch, notes)
    template = group.get("template")
    if not template:
        raise BuildError("Group has no template and no profile; cannot reconstruct command")
    stored = (group.get("submission_context") or {}).get("params") or {}
    if stored:
        params, dataset = dict(stored), group.get("dataset") or ""
    else:
        params, dataset = from_sample_job(call, group_id, group, cluster, clusters)
    changed = apply_changes(group, changes, base_params=params)
    if changes.params:
        params.update(changes.params)
    if changes.dataset is not None:
        dataset = changes.dataset
    overrides = (changed.get("submission_context") or {}).get("overrides")
    diff = None
    if overrides:
        found = find_template(call, template, changed.get("agenthub_revision"), cluster, clusters)
        diff = overrides_vs_template(overrides, found)
    return plain_segments(changed, params, dataset, changes, batch, diff, notes)


def find_template(call: StepCall, name: str, revision: Any, cluster: str, clusters: list[str]) -> dict:
    """The template on the group's cluster, else on the first other cluster that has it (with a
    warning), else ``{}`` (with a warning).  Every failure here only moves on."""
    for candidate in [cluster, *(c for c in clusters if c != cluster)]:
        try:
            body = call.request("template", template=name, revision=revision or None, cluster=candidate)
        except Cancelled:
            raise
        except BenchloopError:
            continue
        if candidate != cluster:
            call.log.warn(f"template '{name}' found on cluster '{candidate}'")
        return body if isinstance(body, dict) else {}
    call.log.warn(f"template '{name}' not found on any known cluster; falling back to unfiltered params")
    return {}


def from_sample_job(call: StepCall, group_id: str, group: dict, cluster: str, clusters: list[str]) -> tuple[dict, str]:
    """Params inferred from the first job's environment (filtered by the template's schema) and
    the dataset path (``DATASET/SPLIT`` when that exists)."""
    template = find_template(call, group["template"], group.get("agenthub_revision"), cluster, clusters)
    schema = template.get("params_schema") or {}
    env: dict[str, Any] = {}
    try:
        jobs = call.request("jobs", group=group.get("group_id") or group_id, cluster=cluster)
        listed = jobs.get("jobs") if isinstance(jobs, dict) else None
        first = listed[0] if isinstance(listed, list) and listed and isinstance(listed[0], dict) else {}
        if first.get("job_id"):
            job = call.request("job", job=str(first["job_id"]), cluster=cluster)
            spec = ((job.get("job_spec_data") or {}).get("spec") or {}) if isinstance(job, dict) else {}
            env = spec.get("env") or {} if isinstance(spec, dict) else {}
        elif listed:
            call.log.warn("could not fetch sample job spec: the job list names no job_id")
    except Cancelled:
        raise
    except BenchloopError as exc:
        call.log.warn(f"could not fetch sample job spec: {exc}")
    per_instance = call.params.texts("per_instance")
    params = infer_params(env, schema, per_instance)
    return params, dataset_path(call, group.get("dataset") or "", env.get("SPLIT"), cluster)


def dataset_path(call: StepCall, dataset: str, split: Any, cluster: str) -> str:
    """``DATASET/SPLIT`` when AgentPlatform has it, else the dataset as recorded."""
    if not dataset or "@" in dataset or not split:
        return dataset
    candidate = f"{dataset}/{split}"
    try:
        call.request("dataset", dataset=candidate, cluster=cluster)
    except Cancelled:
        raise
    except BenchloopError:
        return dataset
    return candidate
