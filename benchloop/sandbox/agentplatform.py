"""The AgentPlatform side of the sandbox: fixed data and its handlers (``ap-cmd``).

AgentPlatform endpoints are rows of the same endpoint table (``service:
agentplatform``), served by the same routes; their paths (``/api/...``,
``/apis/v1/...``) do not collide with Benchloop's ``/openapi/...``.  Every
request must carry ``X-CLUSTER`` (the cluster it asks) and an ``Env`` header
that matches it (``debug``/``test`` for those clusters, else ``product``),
else 400.  The key is ``X-API-KEY`` (the same header as Benchloop's
``X-API-Key`` when case is ignored, so ``app.py`` checks the key of the
endpoint's service): missing or ``expired-...`` -> 401, wrong -> 403.

The data is fixed, chosen so that every branch of ``ap-cmd`` has a group:

=========================  ================  ====================================================
group                      cluster           what it exercises
=========================  ================  ====================================================
``APG-PROFILE``            eval-hk-prod-1    profile group; Benchloop records its cluster
                                             (``EVAL-HK-PROD-1``, lower-cased by the client)
``APG-PARAMS``             sg-prod-2         stored params (secrets, ``$VAR``, quoting), overrides
                                             with sidecars vs the template; found by discovery
``APG-SAMPLE``             hk-prod-2         no stored params: sample job, schema filtering,
                                             ``DATASET/SPLIT`` exists
``APG-REMOTE``             wlcb-prod-1       sample job; its template lives only on bj-prod-1;
                                             ``DATASET/SPLIT`` does not exist
``APG-NOTEMPLATE``         hz-prod-1         no template anywhere: raw environment names
``APG-BARE``               hk-test           neither template nor profile (cannot be rebuilt)
``APG-EMPTY``              pre-release-1     no stored params and no jobs
``APG-DEBUG``              debug             a cluster outside the list (``Env: debug``)
``APG-HOSTILE``            hk-benchmark-dev  every printed value hostile: ``;``, ``|``, ``$(...)``,
                                             backticks, quotes, a newline, ESC/OSC/CR/C1/bidi
                                             controls, leading dashes, ``$AP_API_KEY`` params,
                                             nested and URL secrets (``tests/cli/test_ap_cmd.py``
                                             pastes its command into ``bash`` and ``sh``)
``APG-HOSTILE-PROFILE``    hk-benchmark-dev  a profile group without template: the profile's
                                             hostile ``spec.template`` and name, trials as digits
=========================  ================  ====================================================

The hostile groups are named only by the tests that use them; no other group, profile or
template changes because of them.
"""

from __future__ import annotations

import copy
from typing import Any

from .handlers import ApiError, Request, Response, handler, json_response

_TEMPLATE = {
    "name": "swe-agent",
    "params_schema": {
        "model": {"default": "qwen3.7-max", "required": False},
        "model_api_key": {"default": "", "required": False},
        "max_turns": {"default": 60, "required": False},
        "temperature": {"default": 0.7, "required": False},
        "use_cache": {"default": True, "required": False},
        "region": {"default": "cn-hangzhou", "required": True},
        "dataset": {"default": "", "required": False},
        "tools": {"default": "all", "mapping": {"all": "*"}},
    },
    "resources": {"cpu": "2", "memory": "8Gi"},
    "timeout": 3600,
    "sidecars": {"browser": {"resources": {"cpu": "1", "memory": "2Gi"}, "image": "browser:1"}},
}

# Templates by (cluster, name); ``None`` as cluster: on every cluster of ``TEMPLATE_CLUSTERS``.
TEMPLATES: dict[tuple[str, str], dict[str, Any]] = {
    ("*", "swe-agent"): _TEMPLATE,
    ("bj-prod-1", "remote-agent"): {**copy.deepcopy(_TEMPLATE), "name": "remote-agent"},
}
TEMPLATE_CLUSTERS = ("eval-hk-prod-1", "sg-prod-2", "hk-prod-2", "debug")

PROFILES = {
    ("prof-hostile", 1): {"profile_id": "prof-hostile", "name": "-p $(touch pwned-profile)", "version": 1, "spec": {
        "template": "swe-agent|touch pwned-spec-template", "trials": 1, "concurrency": 1,
        "params": {"model": "qwen3.7-max"},
    }},
    ("prof1", 2): {"profile_id": "prof1", "name": "nightly eval", "version": 2, "spec": {
        "template": "swe-agent", "agenthub_revision": "rev0", "concurrency": 2, "dataset": "swe-bench/test",
        "trials": 1,
        "params": {"model": "qwen3.7-max", "temperature": 0.5, "max_turns": "60"},
        "overrides": {"resources": {"cpu": "2"}},
    }},
}

GROUPS: dict[str, tuple[str, dict[str, Any]]] = {
    "APG-PROFILE": ("eval-hk-prod-1", {
        "group_id": "APG-PROFILE", "template": "swe-agent", "name": "nightly", "dataset": "swe-bench/dev",
        "agenthub_revision": "rev1", "max_concurrency": 4, "queue_id": "q-eval",
        "profile_id": "prof1", "profile_version": 2,
        "submission_context": {
            "trials": 3, "batch_size": 100,
            "params": {"model": "qwen3.7-max", "temperature": "0.5", "max_turns": 80,
                       "model_api_key": "test_model_api_key"},
            "overrides": {"resources": {"cpu": "4"}, "timeout": 7200},
        },
    }),
    "APG-PARAMS": ("sg-prod-2", {
        "group_id": "APG-PARAMS", "template": "swe-agent", "name": "it's a \"quoted\" run",
        "dataset": "swe-bench", "agenthub_revision": "rev2", "max_concurrency": 8, "queue_id": "q1",
        "submission_context": {
            "batch_size": 200,
            "params": {
                "model": "qwen3.7-max", "model_api_key": "test_model_api_key", "openai_key": "sk-abc123",
                "notion_key": "plainvalue", "token": "12345", "access_token": "tok-9f8e7d6c5b4a",
                "github_credential": "ghp_1234567890", "home": "${AP_SANDBOX_HOME}", "note": "a b; c",
                "region": "中文-区域",
            },
            "overrides": {"resources": {"cpu": "2", "memory": "16Gi"}, "timeout": 3600,
                          "sidecars": {"browser": {"resources": {"cpu": "1", "memory": "4Gi"}, "image": "browser:2"},
                                       "db": {"resources": {"cpu": "1"}}}},
        },
    }),
    "APG-SAMPLE": ("hk-prod-2", {
        "group_id": "APG-SAMPLE", "template": "swe-agent", "name": "sample", "dataset": "swe-bench",
        "agenthub_revision": "rev1", "max_concurrency": 2, "queue_id": "q2",
        "submission_context": {"batch_size": 50},
    }),
    "APG-REMOTE": ("wlcb-prod-1", {
        "group_id": "APG-REMOTE", "template": "remote-agent", "name": "remote", "dataset": "terminal-bench",
        "agenthub_revision": "rev3", "max_concurrency": 1, "queue_id": "q3",
        "submission_context": {"overrides": {"resources": {"cpu": "2", "memory": "32Gi"}}},
    }),
    "APG-NOTEMPLATE": ("hz-prod-1", {
        "group_id": "APG-NOTEMPLATE", "template": "gone-agent", "name": "orphan", "dataset": "swe-bench@v2",
        "max_concurrency": 3, "queue_id": "q4", "submission_context": {},
    }),
    "APG-BARE": ("hk-test", {"group_id": "APG-BARE", "name": "bare"}),
    "APG-EMPTY": ("pre-release-1", {
        "group_id": "APG-EMPTY", "template": "swe-agent", "name": "empty", "dataset": "swe-bench",
        "max_concurrency": 1, "queue_id": "q5", "submission_context": {"batch_size": 200},
    }),
    "APG-DEBUG": ("debug", {
        "group_id": "APG-DEBUG", "template": "swe-agent", "name": "debugging", "dataset": "swe-bench",
        "max_concurrency": 1, "submission_context": {"params": {"model": "qwen-debug", "region": "x"}},
    }),
    # Every value that reaches the printed command tries to run `touch pwned-*` when pasted.
    "APG-HOSTILE": ("hk-benchmark-dev", {
        "group_id": "APG-HOSTILE", "template": "swe-agent;touch pwned-template\ntouch pwned-newline #",
        "name": "-n $(touch pwned-name) `touch pwned-tick` \x1b[8m$(touch pwned-hidden)\x1b[0m\x1b]0;t\x07\r\x9b\u202e",
        "dataset": "--dataset;touch pwned-dataset", "agenthub_revision": "rev'\"; touch pwned-quote",
        "max_concurrency": "4", "queue_id": "q1|touch pwned-queue",
        "submission_context": {
            "batch_size": "50",
            "params": {
                "model": "m';touch pwned-param;'", "ap_key": "$AP_API_KEY", "bl_key": "${BENCHLOOP_API_KEY}",
                "nested": {"api_key": "sk-nested-0123456789", "list": [{"password": "hunter2hunter2"}]},
                "aws_secret_access_key": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12",
                "db_url": "postgres://admin:hunter2@db.internal:5432/evals",
                "terminal": "\x1b]52;c;dG91Y2ggcHduZWQ=\x07\x1b[2J\r\x00\x7f\x85\u2028",
            },
            "overrides": {"env": {"OPENAI_API_KEY": "sk-override-0123456789", "password": "hunter2hunter2",
                                  "HOME": "/root"},
                          "containers": [{"env": [{"name": "DB_PASSWORD", "value": "hunter2hunter2"},
                                                  {"name": "LOG_LEVEL", "value": "debug"}]}]},
        },
    }),
    "APG-HOSTILE-PROFILE": ("hk-benchmark-dev", {
        "group_id": "APG-HOSTILE-PROFILE", "name": "$(touch pwned-suite)", "max_concurrency": 2,
        "queue_id": "q`touch pwned-q`", "profile_id": "prof-hostile", "profile_version": 1,
        "submission_context": {"trials": "3", "params": {"model": "qwen3.7-max"}},
    }),
}

_ENV = {"model": "qwen3.7-max", "MODEL_API_KEY": "sk-live-0123456789abcdef", "MAX_TURNS": "60",
        "TEMPERATURE": "0.2", "USE_CACHE": "true", "REGION": "cn-hangzhou", "TOOLS": "all",
        "INSTANCE_ID": "django__django-1", "DATASET": "swe-bench", "SPLIT": "test", "DOCKER_IMAGE": "img:1",
        "EXTRA_FLAG": "on"}
JOBS: dict[str, list[tuple[str, dict[str, str]]]] = {
    "APG-SAMPLE": [("apj-sample-1", _ENV)],
    "APG-REMOTE": [("apj-remote-1", {**_ENV, "SPLIT": "verified", "MAX_TURNS": "90"})],
    "APG-NOTEMPLATE": [("apj-orphan-1", {"MODEL": "qwen-x", "INSTANCE_ID": "i1", "Split": "test",
                                         "HOME_DIR": "/root dir"})],
    "APG-EMPTY": [],
}
DATASETS = {"swe-bench/test", "swe-bench/dev", "terminal-bench/test"}


def _cluster(req: Request) -> str:
    cluster = req.headers.get("x-cluster")
    if not cluster:
        raise ApiError(400, "X-CLUSTER header is required")
    env = req.headers.get("env")
    expected = cluster if cluster in ("debug", "test") else "product"
    if env != expected:
        raise ApiError(400, f"Env header {env!r} does not match cluster {cluster!r} (expected {expected!r})")
    return cluster


def _group(req: Request) -> dict[str, Any]:
    cluster = _cluster(req)
    gid = req.params["group"]
    found = GROUPS.get(gid)
    if found is None or found[0] != cluster:
        raise ApiError(404, f"group not found: {gid}")
    return found[1]


@handler("ap_group")
def ap_group(app: Any, req: Request) -> Response:
    return json_response(_group(req))


@handler("ap_profile")
def ap_profile(app: Any, req: Request) -> Response:
    _cluster(req)
    ident = req.params["profile"]
    version = req.query.get("version")
    for (pid, ver), profile in PROFILES.items():
        if ident in (pid, profile["name"]) and (version is None or str(ver) == version):
            return json_response(profile)
    raise ApiError(404, f"profile not found: {ident}")


@handler("ap_template")
def ap_template(app: Any, req: Request) -> Response:
    cluster = _cluster(req)
    name = req.params["template"]
    found = TEMPLATES.get((cluster, name))
    if found is None and cluster in TEMPLATE_CLUSTERS:
        found = TEMPLATES.get(("*", name))
    if found is None:
        raise ApiError(404, f"template not found: {name}")
    return json_response({**found, "agenthub_revision": req.query.get("agenthub_revision")})


@handler("ap_group_jobs")
def ap_group_jobs(app: Any, req: Request) -> Response:
    _group(req)
    jobs = JOBS.get(req.params["group"], [])
    # The table's rules (validation.py) let only integers through.
    skip, limit = max(0, int(req.query.get("skip", 0))), max(0, int(req.query.get("limit", 50)))
    return json_response({"jobs": [{"job_id": jid} for jid, _ in jobs[skip:skip + limit]], "total": len(jobs)})


@handler("ap_job")
def ap_job(app: Any, req: Request) -> Response:
    cluster = _cluster(req)
    jid = req.params["job"]
    for gid, jobs in JOBS.items():
        for job_id, env in jobs:
            if job_id == jid and GROUPS[gid][0] == cluster:
                body: dict[str, Any] = {"job_id": jid, "group_id": gid}
                if req.query.get("include_spec") == "true":
                    body["job_spec_data"] = {"spec": {"env": env}}
                return json_response(body)
    raise ApiError(404, f"job not found: {jid}")


@handler("ap_dataset_instances")
def ap_dataset_instances(app: Any, req: Request) -> Response:
    _cluster(req)
    name = req.params["dataset"]
    if name not in DATASETS:
        raise ApiError(404, f"dataset not found: {name}")
    return json_response({"instances": [{"instance_id": f"{name}-0001"}], "total": 1})
