"""Every message of the table lints, each from one small broken table.

A case starts from the shipped table (parsed, anchors resolved, as the compiler
sees it), breaks one thing and asserts the complete list of messages that
``lint`` prints, so a lint that stops firing, fires twice or changes its
wording fails here; a list a message quotes is read from that table, never
copied.  The compiler's own errors (invalid YAML, duplicate keys, schema errors,
lint problems as one error) are at the end, each on one broken line of a small
table of their own (tests/fixtures/small_table.yaml).
"""

from __future__ import annotations

import copy
import json
import re
import typing
from pathlib import Path

import msgspec
import pytest
from support import ROOT, TESTS

from benchloop.table.compiler import _plain, compile_spec, parse
from benchloop.table.lint import expand, lint
from benchloop.table.load import SpecError, spec_dir

SPEC = spec_dir() / "benchloop.yaml"
TABLE = _plain(parse(SPEC.read_bytes(), SPEC))


def lint_after(mutate) -> list[str]:
    doc = copy.deepcopy(TABLE)
    mutate(doc)
    return lint(expand(doc))


def action(d, resource, name):
    return d["resources"][resource]["actions"][name]


def dim(d, resource, name, dimension):
    return action(d, resource, name)["dimensions"][dimension]


def part(d, resource, name, dimension, part_name):
    return dim(d, resource, name, dimension)["parts"][part_name]


def where(resource, name, dimension=None, part_name=None):
    text = f"resources.{resource}.actions.{name}"
    if dimension:
        text += f".dimensions.{dimension}"
    if part_name:
        text += f".parts.{part_name}"
    return text


def without(mapping: dict, key: str) -> None:
    del mapping[key]


def reorder(mapping: dict, *keys: str) -> None:
    items = {key: mapping.pop(key) for key in keys}
    mapping.update(items)


REPORT_JOB = where("report", "download", "job", "report")
REPORT_GROUP = where("report", "download", "group")
METRICS_GROUP = where("metrics", "download", "group")
TRAJ_TASK = where("trajectory", "download", "task")
META_TASK = where("metadata", "download", "task")
ART = "resources.artifacts.actions.download.dimensions"
JOBS_ALL = where("jobs", "download", "group", "all")
JOBS_TABLE = where("jobs", "table")
JOBS_ROWS = where("jobs", "table", "group", "rows")
COMPARE = where("compare", "compare")
VIEW = where("view", "view")
COMPARE_ROWS = where("compare", "compare", "group", "rows")
PULL = where("pull", "pull")
BRM_RUN = where("brm", "run", "group", "task")
AP = ("ap-cmd", "ap-cmd")
AP_CMD = where(*AP)


def _names(column_list) -> str:
    return ", ".join(c["name"] if isinstance(c, dict) else c for c in column_list)


# The lists a message quotes, read from the table the cases start from (never copied here): the
# columns compare's rows keep, and every column they declare.
COMPARE_KEPT = _names(part(TABLE, "compare", "compare", "group", "rows")["with"]["keep"])
COMPARE_DECLARED = _names(part(TABLE, "compare", "compare", "group", "rows")["with"]["columns"])

CASES = {
    # -- services (ap-cmd) ------------------------------------------------------------------
    "endpoint of an unknown service": (
        lambda d: d["endpoints"]["ap_group"].update(service="nowhere"),
        ["endpoints.ap_group: unknown service 'nowhere'",
         "services.agentplatform.check: endpoint 'ap_group' is not one of the service's"]),
    "derived variable no header uses": (
        lambda d: d["services"]["agentplatform"]["headers"].pop("Env"),
        ["services.agentplatform: derived variable {env} is used by no header"]),
    "headers on the default service": (
        lambda d: d["services"]["benchloop"].update(headers={"X-Y": "z"}),
        ["services.benchloop: the default service has no header templates"]),
    "service setting from an unknown option": (
        lambda d: d["services"]["agentplatform"]["base_url"].update(option="nope"),
        ["services.agentplatform.base_url: option 'nope' is defined by no action"]),
    "service header variable not bound": (
        lambda d: part(d, *AP, "group", "command")["with"].update(lookup="ap_group"),
        [f"{AP_CMD}.dimensions.group.parts.command: header variable {{cluster}} of service 'agentplatform' "
         "is not bound ('ap_group')"]),
    "two positional options": (
        lambda d: action(d, *AP)["options"].update(other={"positional": True, "type": "str", "help": "x"}),
        [f"{AP_CMD}: more than one positional option",
         f"{AP_CMD}: positional option 'other' must be the id of a one-id action (max_ids: 1)"]),
    "positional option not a string": (
        lambda d: action(d, *AP)["options"]["group"].update(type="int"),
        [f"{AP_CMD}: positional option 'group' must be a 'str' without flags"]),
    "text writer of several ids": (
        lambda d: action(d, *AP).pop("max_ids"),
        [f"{AP_CMD}: positional option 'group' must be the id of a one-id action (max_ids: 1)",
         f"{AP_CMD}: the text writer prints one id's text (max_ids: 1)"]),
    "extra arguments without a positional": (
        lambda d: action(d, "brm", "run").update(extra_args=True),
        ["resources.brm.actions.run: extra_args needs a positional option (where the extra arguments start)"]),
    # -- outputs: what a printing dimension prints -------------------------------------------
    "printed element that cannot be worked out": (
        lambda d: without(dim(d, "brm", "status", "task"), "output"),
        [f"{where('brm', 'status', 'task')}: what it prints cannot be worked out of its parts; "
         "declare output: {json: SCHEMA}"]),
    "output rows that are no list of objects": (
        lambda d: part(d, "brm", "list", "group", "tasks")["output"].update(rows=["total"]),
        [f"{where('brm', 'list', 'group', 'tasks')}.output: rows 'total' is not an array of objects in the "
         "output's schema"]),
    "output id that is no field": (
        lambda d: part(d, "brm", "list", "group", "tasks")["output"].update(ids=["groupid"]),
        [f"{where('brm', 'list', 'group', 'tasks')}.output: id 'groupid' is not a field of the output's schema"]),
    "step output of columns that are no columns": (
        lambda d: d["steps"]["job_rows"].update(output={"columns": "keep"}),
        ["steps.job_rows.output: columns 'keep' names no with: value of type columns"]),
    # -- watch: (bl compare --watch) ------------------------------------------------------
    "watch option that is no flag": (
        lambda d: action(d, "compare", "compare")["watch"].update(option="metric"),
        [f"{where('compare', 'compare')}: watch names no flag option 'metric'"]),
    "watch of an action without a combine": (
        lambda d: action(d, "jobs", "wait").update(watch={"option": "interval", "waiter": "comparison_settled"}),
        [f"{where('jobs', 'wait')}: watch names no flag option 'interval'",
         f"{where('jobs', 'wait')}: watch needs a combine and the stdout writer (the combine says when it is settled)"]),
    "watch of an unknown waiter": (
        lambda d: action(d, "compare", "compare")["watch"].update(waiter="nope"),
        [f"{where('compare', 'compare')}: watch names unknown waiter 'nope'"]),
    "watch of a waiter that asks": (
        lambda d: action(d, "compare", "compare")["watch"].update(waiter="group_jobs_done"),
        [f"{where('compare', 'compare')}: the waiter of a watch asks nothing itself: 'group_jobs_done' has a "
         "request or enumeration"]),
    "watch whose waiter's delay option is missing": (
        lambda d: action(d, "compare", "compare")["options"].pop("interval"),
        [f"{where('compare', 'compare')}: delay option of waiter 'comparison_settled' names no number option of "
         "the action 'interval'"]),
    # -- combines, columns and JMESPath options (bl compare, bl jobs table) -----------------
    "unknown combine": (
        lambda d: action(d, "jobs", "table").update(combine="nope"),
        [f"{JOBS_TABLE}: unknown combine 'nope'"]),
    "combine of a text action": (
        lambda d: action(d, "jobs", "table").update(writer="text", max_ids=1),
        [f"{JOBS_TABLE}: combine 'concat' needs the stdout or the files writer (it makes what is printed or written)"]),
    "combine of a files action whose part writes a file": (
        lambda d: action(d, "view", "view")["dimensions"]["job"]["parts"]["trial"].update(file="{job}.html"),
        [f"{VIEW}: combine 'view' writes its action's files: no part may write one, nor stdout_when or compose "
         "(job.trial)"]),
    "combine value it does not declare": (
        lambda d: action(d, "jobs", "table").update(combine={"name": "concat", "with": {"costs": ["score"]}}),
        [f"{JOBS_TABLE}: combine 'concat' takes no 'with.costs' (it takes: nothing)"]),
    "combine value missing": (
        lambda d: action(d, "compare", "compare").update(combine="compare"),
        [f"{COMPARE}: combine 'compare' needs 'with.costs' (column_names)",
         f"{COMPARE}: combine 'compare' needs 'with.outcome_statuses' (texts)"]),
    "combine cost that is no column of the rows": (
        lambda d: action(d, "compare", "compare")["combine"]["with"].update(costs=["duration_s", "walltime"]),
        [f"{COMPARE}: with.costs of combine 'compare' names no column 'walltime' (the columns: {COMPARE_KEPT})"]),
    "combine cost the rows do not keep": (
        lambda d: action(d, "compare", "compare")["combine"]["with"].update(costs=["num_turns"]),
        [f"{COMPARE}: with.costs of combine 'compare' names no column 'num_turns' (the columns: {COMPARE_KEPT})"]),
    "combine declaring a request": (
        lambda d: d["combines"]["compare"]["with"].update(baseline={"type": "endpoint", "help": "x"}),
        ["combines.compare: with.baseline of type endpoint is for steps (a combine makes no request)",
         f"{COMPARE}: combine 'compare' needs 'with.baseline' (endpoint)"]),
    "column kept twice": (
        lambda d: part(d, "compare", "compare", "group", "rows")["with"].update(keep=["job_id", "job_id"]),
        [f"{COMPARE}: with.costs of combine 'compare' names no column 'duration_s' (the columns: job_id)",
         f"{COMPARE_ROWS}: with.keep of step 'job_rows' names a column twice"]),
    "column declared twice": (
        lambda d: part(d, "jobs", "table", "group", "rows")["with"].update(
            columns=[{"name": "score", "from": "score", "type": "number"},
                     {"name": "score", "from": "pass", "type": "boolean"}]),
        [f"{JOBS_ROWS}: with.columns of step 'job_rows' declares column 'score' twice"]),
    "column read by an expression that is not JMESPath": (
        lambda d: part(d, "jobs", "table", "group", "rows")["with"].update(
            columns=[{"name": "score", "from": "metrics.[", "type": "number"}]),
        [f"{JOBS_ROWS}: with.columns of step 'job_rows' column 'score': from is not a valid JMESPath expression "
         "(Invalid jmespath expression: Incomplete expression:)"]),
    "column of an unknown type": (
        lambda d: part(d, "jobs", "table", "group", "rows")["with"].update(
            columns=[{"name": "score", "from": "score", "type": "float"}]),
        [f"{JOBS_ROWS}: with.columns of step 'job_rows' column 'score': type must be one of number, string, "
         "boolean, json"]),
    "column without a name": (
        lambda d: part(d, "jobs", "table", "group", "rows")["with"].update(columns=[{"from": "score"}]),
        [f"{JOBS_ROWS}: with.columns of step 'job_rows' column 0 must be {{name, from, type}} (name and from are "
         "text)"]),
    "columns that are not a list": (
        lambda d: part(d, "jobs", "table", "group", "rows")["with"].update(columns="score"),
        [f"{JOBS_ROWS}: with.columns of step 'job_rows' must be a list of columns {{name, from, type}}"]),
    "kept column that is not declared": (
        lambda d: part(d, "compare", "compare", "group", "rows")["with"]["keep"].append("walltime"),
        [f"{COMPARE_ROWS}: with.keep of step 'job_rows' names no column 'walltime' (the columns: "
         f"{COMPARE_DECLARED})"]),
    "JMESPath option whose default is not JMESPath": (
        lambda d: d["options"]["unit"].update(default="job.["),
        [f"{JOBS_TABLE}: default of option 'unit' is not a valid JMESPath expression (Invalid jmespath "
         "expression: Incomplete expression:)",
         f"{COMPARE}: default of option 'unit' is not a valid JMESPath expression (Invalid jmespath "
         "expression: Incomplete expression:)",
         *(f"{where(name, name)}: default of option 'unit' is not a valid JMESPath expression (Invalid jmespath "
           "expression: Incomplete expression:)" for name in ("noise", "plan", "trend"))]),
    "fewer ids allowed than required": (
        lambda d: action(d, "compare", "compare").update(max_ids=1),
        [f"{COMPARE}: min_ids 2 is above max_ids 1"]),
    # -- enumerations and endpoint use ------------------------------------------------
    "enumeration endpoint": (
        lambda d: d["enumerations"]["group_jobs"].update(request="nope"),
        ["enumerations.group_jobs: unknown endpoint 'nope'"]),
    "enumeration probe path variable": (
        lambda d: d["enumerations"]["group_jobs"].update(empty_probe="job"),
        ["enumerations.group_jobs: path variable {job} of endpoint 'job' is not bound"]),
    "part endpoint": (
        lambda d: part(d, "report", "get", "job", "report").update(request="nope"),
        [f"{where('report', 'get', 'job', 'report')}: unknown endpoint 'nope'"]),
    "part path variable": (
        lambda d: part(d, "report", "get", "group", "report").update(request="job_report"),
        [f"{where('report', 'get', 'group', 'report')}: path variable {{job}} of endpoint 'job_report' is not bound"]),
    "part probe path variable": (
        lambda d: part(d, "metrics", "get", "group", "detail").update(empty_probe="job"),
        [f"{where('metrics', 'get', 'group', 'detail')}: path variable {{job}} of endpoint 'job' is not bound"]),
    "probe mode without a probe": (
        lambda d: part(d, "overview", "get", "group", "summary").update(empty_probe_mode="warn"),
        [f"{where('overview', 'get', 'group', 'summary')}: empty_probe_mode without empty_probe"]),
    "probe on a single page without its collection": (
        lambda d: part(d, "jobs", "get", "group", "page")["pagination"].pop("collection"),
        [f"{where('jobs', 'get', 'group', 'page')}: empty_probe of a single page needs its collection "
         "(asked only when page 1 is empty)"]),
    "query names no earlier part": (
        lambda d: reorder(dim(d, "overview", "get", "job")["parts"], "job"),
        [f"{where('overview', 'get', 'job', 'stats')}: {{parts.job.group_id}} of endpoint 'job_stats' "
         "names no earlier part"]),
    "query names no option": (
        lambda d: d["endpoints"]["behavior_list"]["query"].update(extra="{no_such}"),
        [f"{where('brm', 'list', 'group', 'tasks')}: {{no_such}} of endpoint 'behavior_list' names no option"]),
    "archive task request path variable": (
        lambda d: dim(d, "metadata", "download", "task")["archive"].update(task_request="job"),
        [f"{META_TASK}: path variable {{job}} of endpoint 'job' is not bound"]),
    # -- named steps ----------------------------------------------------------------------
    "unknown step": (
        lambda d: part(d, "brm", "run", "group", "task").update(step="nope"),
        [f"{BRM_RUN}: unknown step 'nope'"]),
    "step endpoint unknown": (
        lambda d: part(d, "brm", "run", "group", "task")["with"].update(steps="nope"),
        [f"{BRM_RUN}: with.steps of step 'behavior_run' must name an endpoint"]),
    "step endpoint missing": (
        lambda d: without(part(d, "brm", "run", "group", "task")["with"], "create"),
        [f"{BRM_RUN}: step 'behavior_run' needs 'with.create' (endpoint)"]),
    "step optional endpoint unknown": (
        lambda d: part(d, "artifacts", "download", "task", "artifacts")["with"].update(task="nope"),
        [f"{ART}.task.parts.artifacts: with.task of step 'artifacts' must name an endpoint"]),
    "step value not declared": (
        lambda d: part(d, "brm", "run", "group", "task")["with"].update(stepz="behavior_steps"),
        [f"{BRM_RUN}: step 'behavior_run' takes no 'with.stepz' (it takes: "
         f"{', '.join(TABLE['steps']['behavior_run']['with'])})"]),
    "step enumeration by coincidence of names": (
        lambda d: part(d, "artifacts", "download", "group", "artifacts")["with"].update(enumerate="job_list"),
        [f"{ART}.group.parts.artifacts: with.enumerate of step 'artifacts' must name an enumeration"]),
    "step integer": (
        lambda d: part(d, *AP, "group", "command")["with"].update(default_batch_size="200"),
        [f"{AP_CMD}.dimensions.group.parts.command: with.default_batch_size of step 'ap_command' must be an "
         "integer"]),
    "step list of strings": (
        lambda d: part(d, *AP, "group", "command")["with"].update(clusters="hk-test"),
        [f"{AP_CMD}.dimensions.group.parts.command: with.clusters of step 'ap_command' must be a list of "
         "strings"]),
    "step text": (
        lambda d: part(d, *AP, "group", "command")["with"].update(cluster_env=["AP_CLUSTER"]),
        [f"{AP_CMD}.dimensions.group.parts.command: with.cluster_env of step 'ap_command' must be a string"]),
    "step earlier part": (
        lambda d: part(d, "trajectory", "download", "task", "source")["with"].update(source="nope"),
        [f"{TRAJ_TASK}.parts.source: with.source of step 'trace_media' must name an earlier part"]),
    "step jmespath": (
        lambda d: (d["steps"]["trace_media"]["with"].update(pick={"type": "jmespath", "help": "x"}),
                   part(d, "trajectory", "download", "task", "source")["with"].update(pick="a[")),
        [f"{TRAJ_TASK}.parts.source: with.pick of step 'trace_media' is not a valid JMESPath expression "
         "(Invalid jmespath expression: Incomplete expression:)"]),
    "step endpoint path variable": (
        lambda d: part(d, "trajectory", "get", "group", "trajectory")["with"].update(job_ids="job_report"),
        [f"{where('trajectory', 'get', 'group', 'trajectory')}: path variable {{job}} of endpoint "
         "'job_report' is not bound"]),
    "step optional endpoint path variable": (
        lambda d: part(d, "artifacts", "download", "task", "artifacts")["with"].update(task="job_meta"),
        [f"{ART}.task.parts.artifacts: path variable {{job}} of endpoint 'job_meta' is not bound"]),
    "step endpoint query option": (
        lambda d: d["endpoints"]["behavior_steps"]["query"].update(extra="{no_such}"),
        [f"{BRM_RUN}: {{no_such}} of endpoint 'behavior_steps' names no option"]),
    "step template variable": (
        lambda d: part(d, "artifacts", "download", "job", "artifacts")["with"].update(layout="{job}/{group}/{name}"),
        [f"{ART}.job.parts.artifacts: with.layout variable {{group}} is not bound"]),
    # -- waiters -----------------------------------------------------------------------------
    "waiter endpoint": (
        lambda d: d["waiters"]["trace_export"].update(request="nope"),
        ["waiters.trace_export: unknown endpoint 'nope'",
         f"{where('trajectory', 'get', 'group', 'trajectory')}: unknown endpoint 'nope'",
         f"{where('trajectory', 'download', 'group', 'trajectory')}: unknown endpoint 'nope'"]),
    "waiter follow binds a path variable": (
        lambda d: d["waiters"]["trace_export"]["acceptors"][2].update(binds={"other": ["download_job_name"]}),
        [f"{where('trajectory', 'get', 'group', 'trajectory')}: path variable {{name}} of endpoint "
         "'group_trace_export_status' is not bound",
         f"{where('trajectory', 'download', 'group', 'trajectory')}: path variable {{name}} of endpoint "
         "'group_trace_export_status' is not bound"]),
    "waiter timeout": (
        lambda d: d["waiters"]["group_jobs_done"].update(timeout="nope"),
        [f"{where('jobs', 'wait', 'group', 'jobs')}: timeout of waiter 'group_jobs_done' names no number option "
         "of the action 'nope'"]),
    "waiter delay option": (
        lambda d: d["waiters"]["group_jobs_done"]["delay"].update(option="all"),
        [f"{where('jobs', 'wait', 'group', 'jobs')}: delay option of waiter 'group_jobs_done' names no number "
         "option of the action 'all'"]),
    "unknown waiter": (
        lambda d: part(d, "jobs", "wait", "group", "jobs").update(wait="nope"),
        [f"{where('jobs', 'wait', 'group', 'jobs')}: unknown waiter 'nope'"]),
    "waiter follows an unknown waiter": (
        lambda d: d["waiters"]["trace_export"]["acceptors"][2].update(waiter="nope"),
        ["waiters.trace_export.acceptors.2: unknown waiter 'nope'"]),
    "waiter follows itself": (
        lambda d: d["waiters"]["trace_export_status"]["acceptors"].append(
            {"state": "follow", "argument": "status", "expected": "again", "waiter": "trace_export"}),
        ["waiters.trace_export: follows itself (a cycle of follow acceptors)",
         "waiters.trace_export_status: follows itself (a cycle of follow acceptors)"]),
    "waiter unknown enumeration": (
        lambda d: d["waiters"]["group_jobs_done"].update(enumeration="nope"),
        ["waiters.group_jobs_done: unknown enumeration 'nope'"]),
    "waiter argument": (
        lambda d: d["waiters"]["group_jobs_done"]["acceptors"][0].update(argument="[].status["),
        ["waiters.group_jobs_done.acceptors.0: argument is not a valid JMESPath expression (Invalid jmespath "
         "expression: Incomplete expression:)"]),
    "waiter expected statuses": (
        lambda d: d["waiters"]["group_jobs_done"]["acceptors"][0]["expected"].update(statuses="jobz"),
        ["waiters.group_jobs_done.acceptors.0: expected names unknown statuses 'jobz'"]),
    "waiter error matcher": (
        lambda d: d["waiters"]["trace_export"]["acceptors"].append({"state": "retry", "matcher": "error",
                                                                      "expected": 200}),
        ["waiters.trace_export.acceptors.3: an error matcher expects HTTP statuses (400 to 599)"]),
    "waiter counts": (
        lambda d: d["waiters"]["group_jobs_done"]["counts"].update(argument="[", statuses="jobz"),
        ["waiters.group_jobs_done: counts argument is not a valid JMESPath expression (Invalid jmespath "
         "expression: Incomplete expression:)",
         "waiters.group_jobs_done: counts names unknown statuses 'jobz'"]),
    "waiter result counts": (
        lambda d: without(d["waiters"]["group_jobs_done"], "counts"),
        ["waiters.group_jobs_done: result counts needs counts"]),
    "waiter delay": (
        lambda d: d["waiters"]["trace_export"]["delay"].update(min=20, option="interval"),
        ["waiters.trace_export: delay takes one of hint, option or seconds",
         "waiters.trace_export: delay min 20 is above max 15",
         f"{where('trajectory', 'get', 'group', 'trajectory')}: delay option of waiter 'trace_export' names no "
         "number option of the action 'interval'",
         f"{where('trajectory', 'download', 'group', 'trajectory')}: delay option of waiter 'trace_export' names "
         "no number option of the action 'interval'"]),
    "status final value": (
        lambda d: d["statuses"]["job"]["final"].append("done"),
        ["statuses.job: final value 'done' is not one of its values"]),
    "option statuses": (
        lambda d: d["options"]["task_status"].update(statuses="taskz"),
        ["resources.tasks.actions.get: option 'status' names unknown statuses 'taskz'",
         "resources.tasks.actions.download: option 'status' names unknown statuses 'taskz'"]),
    "a text answer is a file": (
        lambda d: d["endpoints"]["job_meta"].update(response={"text": ["text/plain"]}),
        [f"{where(r, 'download', 'task', 'metadata')}: endpoint 'job_meta' answers text, not JSON: its part "
         "writes it to a `file:` of a files action (no pagination, items or shape)" for r in ("trajectory", "metadata")]),
    "wait alone needs the stdout writer": (
        lambda d: dim(d, "jobs", "download", "group")["parts"].update(
            all={"wait": "group_jobs_done", "file": "{group}/job_list.json"}),
        [f"{where('jobs', 'download', 'group', 'all')}: timeout of waiter 'group_jobs_done' names no number "
         "option of the action 'timeout'",
         f"{where('jobs', 'download', 'group', 'all')}: delay option of waiter 'group_jobs_done' names no number "
         "option of the action 'interval'",
         f"{where('jobs', 'download', 'group', 'all')}: a waiter on its own is printed: 'wait' without 'step' "
         "needs the stdout writer",
         f"{PULL}.sync: list section 'jobs' writes no one file of a paginated collection per group"]),
    # -- options -------------------------------------------------------------------------------
    "reserved option name": (
        lambda d: action(d, "brm", "run")["options"].update(ctx="page"),
        ["resources.brm.actions.run: option name 'ctx' is reserved (Python keyword or ctx)"]),
    "unknown option reference": (
        lambda d: action(d, "jobs", "get")["options"].update(x="no_such"),
        ["resources.jobs.actions.get: option 'x' refers to unknown option 'no_such'"]),
    "flag defined twice": (
        lambda d: action(d, "jobs", "get")["options"].update(timeout="page"),
        ["resources.jobs.actions.get: flag --page defined twice"]),
    "flag shadows a global option": (
        lambda d: action(d, "brm", "run")["options"].update(
            wait={"flags": ["--timeout"], "type": "int", "help": "Seconds."}),
        ["resources.brm.actions.run: flag --timeout shadows a global option"]),
    "choice default": (
        lambda d: action(d, "metrics", "get")["options"]["scope"].update(default="nope"),
        ["resources.metrics.actions.get: option 'scope' default is not one of its choices"]),
    "stdout_when": (
        lambda d: action(d, "artifacts", "download").update(stdout_when="include"),
        ["resources.artifacts.actions.download: stdout_when names no flag option 'include'"]),
    # -- compose ---------------------------------------------------------------------------------
    "compose option": (
        lambda d: action(d, "pull", "pull")["compose"].update(option="nope"),
        [f"{PULL}: compose option 'nope' is not an option of the action"]),
    "compose unknown action": (
        lambda d: action(d, "pull", "pull")["compose"]["sections"]["jobs"].update(action="nope"),
        [f"{PULL}: section 'jobs' names unknown action jobs nope"]),
    "compose of compose": (
        lambda d: action(d, "pull", "pull")["compose"]["sections"].update(again={"resource": "pull", "action": "pull"}),
        [f"{PULL}: section 'again' is itself composite"]),
    "compose dimension": (
        lambda d: action(d, "pull", "pull")["compose"].update(
            default=["jobs"], sections={"jobs": {"resource": "jobs", "action": "download"}}),
        [f"{PULL}: no section supports dimension 'job'", f"{PULL}.sync: names unknown section 'metrics'",
         f"{PULL}.sync: names unknown section 'tasks'"]),
    "sync until": (
        lambda d: action(d, "pull", "pull")["compose"]["sync"]["until"].update(
            option="with", wait="nope", status={"field": "finished_at", "statuses": "nope"}),
        [f"{PULL}.sync: until option 'with' is no flag option of the action",
         f"{PULL}.sync: until names unknown waiter 'nope'",
         f"{PULL}.sync: until names unknown statuses 'nope'",
         f"{PULL}.sync: until status field 'finished_at' is not a state field"]),
    "sync": (
        lambda d: action(d, "pull", "pull")["compose"]["sync"].update(option="with", manifest="{job}/sync.json",
                                                                       state=["status", "finished_at"]),
        [f"{PULL}.sync: option 'with' is no flag option of the action",
         f"{PULL}.sync: manifest variable {{job}} is not bound",
         f"{PULL}.sync: sync field 'jobs.*.finished_at' is not declared in the response of endpoint 'job_list'"]),
    "toolsets": (
        lambda d: d["mcp"]["toolsets"].update(extra={"help": "x", "resources": ["jobs", "nope"]}) or
        d["mcp"].update(default=["jobs", "nah"]),
        ["mcp: resource 'jobs' is in toolsets 'jobs' and 'extra'",
         "mcp: toolset 'extra' names unknown resource 'nope'",
         "mcp: default names unknown toolset 'nah'"]),
    "service check": (
        lambda d: d["services"]["agentplatform"]["check"].update(request="job_list"),
        ["services.agentplatform.check: endpoint 'job_list' is not one of the service's"]),
    "compose default": (
        lambda d: action(d, "pull", "pull")["compose"].update(default=["metrics", "nope"]),
        [f"{PULL}: default names unknown section 'nope'"]),
    # -- dimensions: select, element, archive ---------------------------------------------
    "select option": (
        lambda d: dim(d, "overview", "get", "group")["select"].update(option="nope"),
        [f"{where('overview', 'get', 'group')}: select option 'nope' is not a choice option of the action"]),
    "select choices": (
        lambda d: without(dim(d, "overview", "get", "group")["select"]["choices"], "tasks"),
        [f"{where('overview', 'get', 'group')}: select choices differ from the option's choices"]),
    "select part": (
        lambda d: dim(d, "overview", "get", "group")["select"]["choices"].update(all=["summary", "nope"]),
        [f"{where('overview', 'get', 'group')}: select names unknown part 'nope'"]),
    "element needs one part": (
        lambda d: dim(d, "report", "get", "job")["parts"].update(again={"request": "job_report"}),
        [f"{where('report', 'get', 'job')}: element 'part' needs exactly one selected part"]),
    "element part": (
        lambda d: dim(d, "metrics", "get", "job").update(element="nope"),
        [f"{where('metrics', 'get', 'job')}: element names unknown part 'nope'"]),
    "archive order": (
        lambda d: dim(d, "trajectory", "download", "task")["archive"]["order"].append("nope"),
        [f"{TRAJ_TASK}: archive order names unknown part 'nope'"]),
    # -- parts ---------------------------------------------------------------------------------
    "unknown enumeration": (
        lambda d: part(d, "report", "download", "group", "jobs").update(each="nope"),
        [f"{REPORT_GROUP}.parts.jobs: unknown enumeration 'nope'",
         f"{REPORT_GROUP}.parts.jobs: path variable {{job}} of endpoint 'job_report' is not bound",
         f"{REPORT_GROUP}.parts.jobs: file variable {{job}} is not bound"]),
    "each needs files": (
        lambda d: part(d, "report", "get", "group", "report").update(each="group_jobs", request="job_report"),
        [f"{where('report', 'get', 'group', 'report')}: 'each' parts need the files writer"]),
    "when": (
        lambda d: part(d, "jobs", "get", "group", "page").update(when="not everything"),
        [f"{where('jobs', 'get', 'group', 'page')}: when names no option of the action 'everything'"]),
    "wait without a step": (
        lambda d: without(part(d, "trajectory", "get", "group", "trajectory"), "step"),
        [f"{where('trajectory', 'get')}.dimensions.group: what it prints cannot be worked out of its parts; "
         "declare output: {json: SCHEMA}"]),
    "global option shadowed": (
        lambda d: action(d, "jobs", "get")["options"].update(
            verbose_too={"flags": ["--verbose"], "type": "flag", "help": "x"}),
        [f"{where('jobs', 'get')}: flag --verbose shadows a global option"]),
    "archive entry missing": (
        lambda d: without(part(d, "metadata", "download", "task", "metadata"), "entry"),
        [f"{META_TASK}.parts.metadata: an archive part needs 'entry'"]),
    "file missing": (
        lambda d: without(part(d, "report", "download", "job", "report"), "file"),
        [f"{REPORT_JOB}: a files action needs 'file'"]),
    # -- templates ---------------------------------------------------------------------------
    "file variable": (
        lambda d: part(d, "report", "download", "job", "report").update(file="{job}/{group}.md"),
        [f"{REPORT_JOB}: file variable {{group}} is not bound"]),
    "step file variable": (
        lambda d: part(d, "trajectory", "download", "group", "trajectory").update(file="{group}/{job}.json"),
        [f"{where('trajectory', 'download', 'group', 'trajectory')}: file variable {{job}} is not bound"]),
    "file without the id": (
        lambda d: part(d, "tasks", "download", "group", "all").update(file="task_list.json"),
        [f"{where('tasks', 'download', 'group', 'all')}: file 'task_list.json' does not use {{group}}: "
         "every group would write the same path"]),
    "fan-out file without the job": (
        lambda d: part(d, "report", "download", "group", "jobs").update(file="{group}/report.md"),
        [f"{REPORT_GROUP}.parts.jobs: file '{{group}}/report.md' does not use {{job}}: "
         "every job would write the same path"]),
    "archive file variable": (
        lambda d: dim(d, "metadata", "download", "task")["archive"].update(file="{task}/{job}.zip"),
        [f"{META_TASK}.archive: file variable {{job}} is not bound"]),
    "archive file without the id": (
        lambda d: dim(d, "metadata", "download", "task")["archive"].update(file="metadata.zip"),
        [f"{META_TASK}.archive: file 'metadata.zip' does not use {{task}}: every task would write the same path"]),
    "entry variable": (
        lambda d: part(d, "metadata", "download", "task", "metadata").update(entry="{task}/{job}.json"),
        [f"{META_TASK}.parts.metadata: entry variable {{task}} is not bound"]),
    "entry without the job": (
        lambda d: part(d, "metadata", "download", "task", "metadata").update(entry="metadata/all.json"),
        [f"{META_TASK}.parts.metadata: entry 'metadata/all.json' does not use {{job}}: "
         "every job would write the same path"]),
    # -- responses: every answer declared, every schema sound, every field the table reads declared --
    "endpoint without a response": (
        lambda d: without(d["endpoints"]["job_meta"], "response"),
        ["endpoints.job_meta: no response declared (json: SCHEMA, binary: [TYPES] or text: [TYPES])"]),
    "service without an error body": (
        lambda d: without(d["services"]["agentplatform"], "error"),
        ["services.agentplatform: no error body declared (error: SCHEMA)"]),
    "reference to no schema": (
        lambda d: d["schemas"]["Job"]["properties"].update(status={"$ref": "#/schemas/JobStatuz"}),
        ["schemas.Job.properties.status: $ref '#/schemas/JobStatuz' names no schema (write #/schemas/NAME)"]),
    "reference outside the schemas": (
        lambda d: d["endpoints"]["job_rsi_trigger"]["response"].update(json={"$ref": "#/definitions/RsiTrigger"}),
        ["endpoints.job_rsi_trigger.response.json: $ref '#/definitions/RsiTrigger' names no schema "
         "(write #/schemas/NAME)"]),
    "identity of a row field the rows do not declare": (
        lambda d: d["endpoints"]["job_list"]["response"].update(identity={"jobs.*.groupid": "{group}"}),
        ["endpoints.job_list.response.identity: identity field 'jobs.*.groupid' is not declared in the response "
         "of endpoint 'job_list'"]),
    "identity field the answer does not declare": (
        lambda d: d["endpoints"]["job_meta"]["response"].update(identity={"jobid": "{job}"}),
        ["endpoints.job_meta.response.identity: identity field 'jobid' is not declared in the response of "
         "endpoint 'job_meta'"]),
    "identity of a variable the request does not bind": (
        lambda d: d["endpoints"]["job_meta"]["response"].update(identity={"group_id": "{group}"}),
        ["endpoints.job_meta: identity field 'group_id': '{group}' names no variable of the request "
         "(its path and query bind ['job'])"]),
    "schema that is no object": (
        lambda d: d["schemas"]["Job"]["properties"].update(score="number"),
        ["schemas.Job.properties.score: a schema must be an object"]),
    "unknown keyword (an unquoted comma)": (
        lambda d: d["schemas"]["Job"]["properties"]["score"].update({"in seconds.": None}),
        ["schemas.Job.properties.score: unknown keyword 'in seconds.' (in YAML, a comma splits an unquoted text of "
         "a {...} mapping)"]),
    "unknown type": (
        lambda d: d["schemas"]["Job"]["properties"]["score"].update(type=["number", "nul"]),
        ["schemas.Job.properties.score: unknown type 'nul'"]),
    "required field not declared": (
        lambda d: d["schemas"]["JobPage"].update(required=["jobs", "totl"]),
        ["schemas.JobPage: required field 'totl' is not declared in properties"]),
    "closed schema": (
        lambda d: d["schemas"]["Artifact"].update(additionalProperties=False),
        ["schemas.Artifact: additionalProperties: false closes the answer; the backend may add fields at any time"]),
    "map values typed": (
        lambda d: d["schemas"]["JobStats"]["properties"]["by_status"].update(additionalProperties={"type": "integer"}),
        ["schemas.JobStats.properties.by_status: additionalProperties with a type refuses fields the backend may add "
         "(describe the values instead)"]),
    "rows that are no array of objects": (
        lambda d: d["endpoints"]["group_job_ids"]["response"].update(rows=["job_ids"]),
        ["endpoints.group_job_ids: response rows 'job_ids' is not an array of objects in the response"]),
    "required name that is no parameter": (
        lambda d: d["endpoints"]["group_metrics_detail"].update(required=["group"]),
        ["endpoints.group_metrics_detail: required 'group' is no query parameter or body field"]),
    "pagination collection not declared": (
        lambda d: d["enumerations"]["group_jobs"]["pagination"].update(collection="jobz"),
        ["enumerations.group_jobs: pagination collection 'jobz' is not declared in the response of endpoint 'job_list'"]),
    "pagination collection that is no array": (
        lambda d: part(d, "metrics", "download", "group", "detail")["pagination"].update(collection="total"),
        [f"{METRICS_GROUP}.parts.detail: pagination collection 'total' is not an array in the response of "
         "endpoint 'group_metrics_detail'"]),
    "pagination id key not declared": (
        lambda d: part(d, "jobs", "download", "group", "all")["pagination"].update(id_keys=["jobid"]),
        [f"{JOBS_ALL}: pagination field 'jobs.*.jobid' is not declared in the response of endpoint 'job_list'"]),
    "pagination total not declared": (
        lambda d: d["schemas"]["TaskPage"]["properties"].update(count=d["schemas"]["TaskPage"]["properties"].pop(
            "total")) or d["schemas"]["TaskPage"].update(required=["tasks"]),
        [f"{where('tasks', 'get', 'group', 'all')}: pagination field 'total' is not declared in the response of "
         "endpoint 'group_tasks'",
         f"{where('tasks', 'download', 'group', 'all')}: pagination field 'total' is not declared in the response of "
         "endpoint 'group_tasks'"]),
    "items collection not declared": (
        lambda d: part(d, "artifacts", "download", "job", "artifacts")["items"].update(collection="artefacts"),
        [f"{ART}.job.parts.artifacts: items collection 'artefacts' is not declared in the response of endpoint "
         "'job_artifacts'"]),
    "items filter field not declared": (
        lambda d: part(d, "artifacts", "download", "job", "artifacts")["items"]["filter"].update(field="nam"),
        [f"{ART}.job.parts.artifacts: items field 'artifacts.*.nam' is not declared in the response of endpoint "
         "'job_artifacts'"]),
    "items find key declared nowhere": (
        lambda d: part(d, "trajectory", "download", "task", "source")["items"].update(find="trace_medya"),
        [f"{TRAJ_TASK}.parts.source: items find 'trace_medya' is declared nowhere in the response of endpoint "
         "'job_trajectory'"]),
    "items field of a found object not declared": (
        lambda d: part(d, "trajectory", "download", "task", "source")["items"].update(require="oss_url"),
        [f"{TRAJ_TASK}.parts.source: items field 'oss_url' of 'trace_media' is not declared in the response of "
         "endpoint 'job_trajectory'"]),
    "waiter result not declared": (
        lambda d: d["waiters"]["trace_export"].update(result=["download_uri"]),
        ["waiters.trace_export: result field 'download_uri' is not declared in the response of endpoint "
         "'group_trace_export'"]),
    "waiter hint not declared": (
        lambda d: d["waiters"]["trace_export_status"]["delay"].update(hint=["retry_after_seconds", "retryAfterSecs"]),
        ["waiters.trace_export_status: delay hint field 'retryAfterSecs' is not declared in the response of "
         "endpoint 'group_trace_export_status'"]),
    "waiter binds field not declared": (
        lambda d: d["waiters"]["trace_export"]["acceptors"][2].update(binds={"name": ["job_name"]}),
        ["waiters.trace_export.acceptors.2: binds 'name' field 'job_name' is not declared in the response of "
         "endpoint 'group_trace_export'"]),
    "shape field not declared": (
        lambda d: part(d, "rsi", "download", "job", "rsi")["shape"]["with"].update(path=["report", "reportmd"]),
        [f"{where('rsi', 'download', 'job', 'rsi')}: shape 'text_field' field 'report.reportmd' is not declared in "
         "the response of endpoint 'job_rsi'"]),
    "field of an earlier part not declared": (
        lambda d: d["endpoints"]["job_stats"]["query"].update(group_id="{parts.job.groupid}"),
        [f"{where('overview', 'get', 'job', 'stats')}: {{parts.job.groupid}} field 'groupid' is not declared in the "
         "response of endpoint 'job'"]),
    "error field not declared": (
        lambda d: action(d, "brm", "list").update(error_field="message"),
        [f"{where('brm', 'list')}: error_field 'message' is not declared in the error body of service 'benchloop'"]),
    # -- outputs -------------------------------------------------------------------------------
    "output of another resource": (
        lambda d: part(d, "report", "download", "job", "report").update(file="{job}/job_list.json"),
        [f"{REPORT_JOB}: output path '{{job}}/job_list.json' also used by {JOBS_ALL}"]),
    "output of another part": (
        lambda d: part(d, "metrics", "download", "group", "detail").update(file="{group}/overall_metrics.json"),
        [f"{METRICS_GROUP}.parts.detail: output path '{{group}}/overall_metrics.json' also used by "
         f"{METRICS_GROUP}.parts.overall"]),
    "output of another part, other variables": (
        lambda d: (without(action(d, "report", "download")["dimensions"], "job"),
                   part(d, "report", "download", "group", "jobs").update(file="{job}_report.md")),
        [f"{REPORT_GROUP}.parts.jobs: output path '{{job}}_report.md' also used by {REPORT_GROUP}.parts.summary"]),
    "output of another dimension": (
        lambda d: (part(d, "report", "download", "group", "summary").update(file="{group}/summary.md"),
                   part(d, "report", "download", "group", "jobs").update(file="{job}_report.md")),
        [f"{REPORT_GROUP}.parts.jobs: output path '{{job}}_report.md' also used by {REPORT_JOB}"]),
    "step file of another resource": (
        lambda d: part(d, "trajectory", "download", "group", "trajectory").update(file="{group}/job_list.json"),
        [f"{where('trajectory', 'download', 'group', 'trajectory')}: output path '{{group}}/job_list.json' "
         f"also used by {JOBS_ALL}"]),
    "step layout of another resource": (
        lambda d: part(d, "artifacts", "download", "group", "artifacts")["with"].update(
            layout="{group}/job_list.json"),
        [f"{ART}.group.parts.artifacts: output path '{{group}}/job_list.json' also used by {JOBS_ALL}"]),
    "archive file of another resource": (
        lambda d: dim(d, "metadata", "download", "task")["archive"].update(file="{task}_trajectories.zip"),
        [f"{META_TASK}.archive: output path '{{task}}_trajectories.zip' also used by {TRAJ_TASK}.archive"]),
    "archive entry of another part": (
        lambda d: part(d, "trajectory", "download", "task", "metadata").update(
            entry="trajectories/{job}_trajectory.json"),
        [f"{TRAJ_TASK}.parts.metadata: archive entry 'trajectories/{{job}}_trajectory.json' also used by "
         f"{TRAJ_TASK}.parts.trajectory"]),
}


@pytest.mark.parametrize(("mutate", "expected"), CASES.values(), ids=CASES.keys())
def test_each_lint_message(mutate, expected):
    assert lint_after(mutate) == expected


def test_every_message_of_speclint_has_a_case():
    """Each message template of speclint.py is produced by at least one case above."""
    source = (ROOT / "benchloop" / "table" / "lint.py").read_text(encoding="utf-8")
    templates = re.findall(r'(?:append|add)\(f"\{[^{}]*\}: (.*)"\)$', source, re.M)
    # Every message is one f-string on one line, so that this test sees them all.
    assert len(templates) == len(re.findall(r"(?:\bc\.add|problems\.append)\(f", source)) > 30
    produced = [message.split(": ", 1)[1] for _, messages in CASES.values() for message in messages]
    for template in templates:
        pattern = re.escape(re.sub(r"\{[^{}]*\}+", "\0", template.replace("{{", "\1").replace("}}", "\2")))
        pattern = pattern.replace("\0", ".+").replace("\x01", r"\{").replace("\x02", r"\}")
        assert any(re.fullmatch(pattern, message) for message in produced), template


# -- what the shipped table relies on ------------------------------------------------------

def test_shipped_table_passes():
    assert lint(expand(copy.deepcopy(TABLE))) == []


@pytest.mark.parametrize(
    "mutate",
    [
        # Two dimensions with different id variables: {job}_report.md and {group}_report.md.
        lambda d: None,
        # A stdout action sharing a files action's dimensions (metrics get): its files are not written.
        lambda d: dim(d, "metrics", "get", "group")["parts"]["detail"].update(file="{group}/overall_metrics.json"),
        # Parts that never run together may write the same path: when / when not ...
        lambda d: (action(d, "jobs", "download")["options"].update(all="all"),
                   part(d, "jobs", "download", "group", "all").update(when="all"),
                   dim(d, "jobs", "download", "group")["parts"].update(
                       page={"when": "not all", "request": "job_list", "file": "{group}/job_list.json"})),
        # ... and parts that no select choice runs together.
        lambda d: (dim(d, "metrics", "download", "group")["select"]["choices"].update(all=["overall"]),
                   part(d, "metrics", "download", "group", "detail").update(file="{group}/overall_metrics.json")),
        # Two files actions of one resource may share outputs (e.g. dimensions shared by an anchor).
        lambda d: d["resources"]["tasks"]["actions"].update(
            again=copy.deepcopy(action(d, "tasks", "download"))),
        # A command that takes one id only may write a fixed name.
        lambda d: (action(d, "tasks", "download").update(max_ids=1),
                   part(d, "tasks", "download", "group", "all").update(file="task_list.json")),
    ],
    ids=["dimension-variables", "stdout-files", "when-not", "select", "same-resource", "max-ids-1"],
)
def test_outputs_that_are_not_clashes(mutate):
    assert lint_after(mutate) == []


def test_step_binds_are_what_makes_step_endpoints_pass():
    doc = copy.deepcopy(TABLE)
    for step in doc["steps"].values():
        for param in step["with"].values():
            param.pop("binds", None)
    problems = lint(expand(doc))
    assert f"{TRAJ_TASK}.parts.source: {{oss_uri}} of endpoint 'trace_media' names no option" in problems
    assert f"{ART}.group.parts.artifacts: path variable {{job}} of endpoint 'job_artifacts' is not bound" in problems
    assert f"{ART}.job.parts.artifacts: with.layout variable {{name}} is not bound" in problems


def test_the_engine_implements_exactly_the_declared_steps_transforms_and_modes():
    """The table declares names (its steps and combines, and the schema's enums of transforms and
    pagination modes); the engine's registries implement them, no more and no less."""
    from benchloop.engine.combines import COMBINES
    from benchloop.engine.pagination import ITER_MODES, MODES
    from benchloop.engine.steps import STEPS
    from benchloop.engine.transforms import TRANSFORMS
    from benchloop.table.schema import PaginationMode, TransformName

    assert set(STEPS) == set(TABLE["steps"])
    assert set(COMBINES) == set(TABLE["combines"])
    assert set(TRANSFORMS) == set(typing.get_args(TransformName))
    assert set(MODES) == set(typing.get_args(PaginationMode))
    assert set(ITER_MODES) <= set(MODES)


# -- the compiler's errors -------------------------------------------------------------------
# Each breaks one line of a small table of its own (tests/fixtures/small_table.yaml, which the
# engine's unit tests run over too), so the shipped table's wording can change freely.
FIXTURE = TESTS / "fixtures" / "small_table.yaml"
SMALL_TEXT = FIXTURE.read_text(encoding="utf-8")


def compile_text(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "benchloop.yaml"
    path.write_text(text, encoding="utf-8")
    return compile_spec(path.read_bytes(), path)


def broken(old: str, new: str, count: int = 1) -> str:
    """The fixture table with ``old`` (which must be there) replaced by ``new``."""
    assert old in SMALL_TEXT, old
    return SMALL_TEXT.replace(old, new, count)


def test_the_fixture_table_compiles_and_passes_the_lints(tmp_path):
    assert compile_text(tmp_path, SMALL_TEXT)["resources"]
    assert lint(expand(_plain(parse(FIXTURE.read_bytes(), FIXTURE)))) == []


def test_lint_problems_are_one_spec_error(tmp_path):
    text = re.sub(r"request: note\b", "request: nope", SMALL_TEXT)  # the note endpoint, in three parts
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    notes = "resources.notes.actions"
    assert str(err.value) == (
        f"{tmp_path / 'benchloop.yaml'}: {notes}.get.dimensions.job.parts.note: unknown endpoint 'nope'; "
        f"{notes}.download.dimensions.job.parts.note: unknown endpoint 'nope'; "
        f"{notes}.download.dimensions.group.parts.items: unknown endpoint 'nope'")


def test_duplicate_key(tmp_path):
    text = broken("version: 1\n", "version: 1\nversion: 1\n")
    line = text.splitlines().index("version: 1") + 2
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == f"{tmp_path / 'benchloop.yaml'}: line {line}: duplicate key 'version'"


def test_duplicate_key_in_a_nested_mapping(tmp_path):
    text = broken("    path: /notes/{job}\n", "    path: /notes/{job}\n    path: /x\n")
    line = text.splitlines().index("    path: /x") + 1
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == f"{tmp_path / 'benchloop.yaml'}: line {line}: duplicate key 'path'"


def test_invalid_yaml(tmp_path):
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, "version: 1\nendpoints: [unclosed\n")
    assert str(err.value).startswith(f"{tmp_path / 'benchloop.yaml'}: invalid YAML: ")


def test_schema_unknown_key(tmp_path):
    text = broken("    path: /notes/{job}\n", "    path: /notes/{job}\n    colour: red\n")
    line = text.splitlines().index("    colour: red") + 1
    from benchloop.table.schema import Endpoint

    allowed = ", ".join(sorted(f.encode_name for f in msgspec.structs.fields(Endpoint)))
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == (f"{tmp_path / 'benchloop.yaml'}:{line}: endpoints.note.colour: "
                              f"unknown key 'colour' (allowed: {allowed})")


def test_a_field_of_the_model_alone_is_no_key_of_the_table(tmp_path):
    """An entry's name is its key (``model.KEY``) and a model's own field is hidden (``model.HIDDEN``):
    written in the YAML, either is refused at its line, though the record has a field of that name."""
    from benchloop.table.model import HIDDEN, KEY, Option

    assert KEY.startswith(HIDDEN) and any(f.encode_name.startswith(HIDDEN) for f in msgspec.structs.fields(Option))
    for key in (KEY, HIDDEN + "required"):
        text = broken("    path: /notes/{job}\n", f"    path: /notes/{{job}}\n    {key}: x\n")
        line = text.splitlines().index(f"    {key}: x") + 1
        with pytest.raises(SpecError) as err:
            compile_text(tmp_path, text)
        assert str(err.value) == f"{tmp_path / 'benchloop.yaml'}:{line}: endpoints.note.{key}: unknown key {key!r}"
    text = broken("    request: item_list\n", "    request: item_list\n    colour: red\n")  # a record of model.py
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value).endswith("enumerations.group_items.colour: unknown key 'colour' "
                                   "(allowed: binds, empty_probe, help, pagination, request)")


def test_a_name_of_another_entry_must_be_a_string(tmp_path):
    """A field naming another entry (``model.Name``) takes a name: anything else is refused by the
    declaration, at its line (whether the name exists is the lints')."""
    text = broken("    request: item_list\n", "    request: [item_list]\n")
    line = text.splitlines().index("    request: [item_list]") + 1
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == (f"{tmp_path / 'benchloop.yaml'}:{line}: enumerations.group_items.request: "
                              "Expected `str`, got `list`")


def test_schema_wrong_value(tmp_path):
    text = broken("  note:\n    method: GET\n", "  note:\n    method: FETCH\n")
    line = text.splitlines().index("    method: FETCH") + 1
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == (f"{tmp_path / 'benchloop.yaml'}:{line}: endpoints.note.method: "
                              "'FETCH' is not one of ['GET', 'POST']")


def test_schema_response_names_its_form(tmp_path):
    """A response is {json: SCHEMA}, {binary: [TYPES]} or {text: [TYPES]}: the bare word of old tables
    (which said nothing of the content types) is refused where it is written."""
    text = broken("    path: /groups/{group}/note\n    response: {json: {type: object}}\n",
                  "    path: /groups/{group}/note\n    response: binary\n")
    line = text.splitlines().index("    response: binary") + 1
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    assert str(err.value) == (f"{tmp_path / 'benchloop.yaml'}:{line}: endpoints.group_note.response: "
                              "Expected `object | null`, got `str`")


def test_schema_keys_that_exclude_each_other(tmp_path):
    """What a type cannot say (a part is a request, a step or a waiter) is refused by the
    declaration too, at the part's own line."""
    text = SPEC.read_text(encoding="utf-8").replace(
        "                request: job_report\n", "                request: job_report\n                step: x\n", 1)
    lines = text.splitlines()
    part = lines.index("                step: x") - 1
    while not lines[part].rstrip().endswith(":"):  # the part's own key
        part -= 1
    with pytest.raises(SpecError) as err:
        compile_text(tmp_path, text)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'benchloop.yaml'}:{part + 1}: resources.")
    assert message.endswith(f".parts.{lines[part].strip().rstrip(':')}: `request` does not go with `step`")


def test_the_schema_file_is_generated_from_the_declaration():
    """spec/benchloop.schema.json is what codegen makes of table/schema.py (a hand edit fails
    `make docs-check`), every record's keys are its properties, and the shipped table is valid."""
    import jsonschema
    import yaml

    from benchloop.table import schema as declaration
    from codegen.table_schema import OUT, render

    assert render()[OUT] == OUT.read_text(encoding="utf-8")
    schema = json.loads(OUT.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(SPEC.read_text(encoding="utf-8")))) == []
    endpoint = schema["$defs"]["Endpoint"]
    assert set(endpoint["properties"]) == {f.encode_name for f in msgspec.structs.fields(declaration.Endpoint)}
    assert endpoint["additionalProperties"] is False and endpoint["properties"]["service"]["description"]
