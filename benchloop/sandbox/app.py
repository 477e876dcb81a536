"""The sandbox backend without sockets: auth, routing, dispatch, faults.

Why apart from the HTTP server: everything a request means (which endpoint,
whether the key is right, which fault to inject, which body to send) is
decided here from plain values, so the server module only moves bytes and the
logic can be exercised without a network.

Before any handler runs, a request is checked against what the table says
the endpoint accepts (``validation.py``: required parameters, integers,
typed body fields): what does not fit gets a 400, the same refusal the
OpenAPI document promises.

Besides the endpoint table, three pseudo-OSS paths are served (they stand in
for presigned object-store URLs, so like those they need no API key but carry
a ``sig`` query signature instead):

* ``/_export/<group>.jsonl.gz?sig=`` - the trace export file (gzip JSON lines);
* ``/_oss/artifacts/<job>/result.tgz?sig=`` - the artifact listing's ``url``;
* ``/_sso/login.alibaba-inc.com/ssoLogin.htm`` - the HTML page an SSO redirect
  of a trace media request lands on.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from benchloop.table.model import Endpoint

from . import agentplatform, generated, handlers, payloads  # noqa: F401 - agentplatform registers its handlers
from .dataset import LIVE_GROUP, Dataset
from .faults import RANGE_ENDPOINTS, FaultPlan, apply_range, fault_response
from .handlers import ApiError, Request, Response, error_response, json_response
from .live import LiveGroup
from .routing import Router, load_endpoints
from .state import Fault, Headers, State
from .validation import Refused, RequestRules


@dataclass
class Config:
    api_key: str = "sandbox-key"
    # The key of the AgentPlatform endpoints (``service: agentplatform``; see agentplatform.py).
    ap_api_key: str = "ap-sandbox-key"
    trajectory_steps: int = 0  # 0: as many turns as each job has (trajectories.py); N: N steps
    artifact_bytes: int = 4096
    range_support: bool = True
    # Base URL of the pseudo object store (export download_url, artifact listing url);
    # None: the backend's own origin.  Another origin stands in for a real OSS host.
    object_store_url: str | None = None
    # The artifact proxy answers 302 to the presigned object-store URL instead of streaming.
    redirect_artifacts: bool = False
    # Seconds between two jobs of the live group finishing (``live.py``; 0: only when advanced).
    live_pace: float = 2.0
    # The live job (its number, 0: none) whose artifact the backend cannot sign once it finished
    # (an ``artifact_sign_failed`` listing entry): a failure that will not change (pull --sync).
    live_unsigned: int = 0

    def key_of(self, service: str) -> str:
        """The key the sandbox expects from clients of ``service``."""
        return self.ap_api_key if service == "agentplatform" else self.api_key


class App:
    def __init__(
        self,
        dataset: Dataset,
        config: Config,
        state: State | None = None,
        endpoints: dict[str, Endpoint] | None = None,
    ) -> None:
        self.dataset = dataset
        self.config = config
        self.state = state or State()
        self.router = Router(endpoints if endpoints is not None else load_endpoints())
        from benchloop.table.load import load_model

        self.model = load_model()  # read once: asking at every request stats the table's files
        self.rules = RequestRules(self.model, self.router.endpoints)
        self.state.endpoint_names = tuple(self.router.endpoints)
        self.state.reset_stats()
        self.default_base_url = "http://127.0.0.1"
        self.scheme = "http"
        self.fault_plan = FaultPlan()
        self.live = LiveGroup(dataset, config.live_pace)
        self._memo: dict[tuple[str, str], Any] = {}
        self._settled: dict[str, dict[tuple[str, ...], Any]] = {}  # generated.settled_fields, per endpoint
        self._memo_lock = threading.Lock()
        self.seed_flows()

    # ------------------------------------------------------------ state
    def seed_flows(self) -> None:
        """Pre-existing behaviour analyses: one finished task per non-empty group."""
        for gid in self.dataset.group_ids():
            grp = self.dataset.group(gid)
            if not grp or not grp["job_count"]:
                continue
            info = payloads.behavior_steps(grp, grp["idx"])
            task = {"groupId": gid, "status": "Finished", "samplingMode": info["samplingMode"],
                    "steps": info["steps"][:2], "scoringLimit": 32}
            if info["samplingMode"] == "step":
                task["sampleSize"] = 512
            self.state.behavior_add(task, preset_uid=f"uid-{gid}-1")

    def reset_state(self) -> None:
        self.state.reset_flows()
        self.seed_flows()
        self.live.restart()

    def memoised(self, kind: str, key: str, build):
        """Per-group results are cached: the dataset never changes while serving, but for the
        live group, whose results are cached per state (``live.version``)."""
        if key == LIVE_GROUP:
            key = f"{key}@{self.live.version}"
        with self._memo_lock:
            if (kind, key) in self._memo:
                return self._memo[(kind, key)]
        value = build()
        with self._memo_lock:
            self._memo[(kind, key)] = value
        return value

    def aggregates(self, group_id: str) -> dict[str, dict[str, Any]]:
        def build() -> dict[str, dict[str, Any]]:
            agg = payloads.group_aggregates(self.dataset.aggregate_jobs(group_id))
            if self.dataset.is_scale(group_id):  # over a sample (scale.py): the group's own count
                agg["run_metrics"]["job_count"] = self.dataset.scale.jobs
            return agg

        return self.memoised("agg", group_id, build)

    # ----------------------------------------------------------- pseudo-OSS
    def sign(self, resource: str) -> str:
        secret = f"{self.dataset.seed}:{self.config.api_key}".encode()
        return hmac.new(secret, resource.encode(), hashlib.sha256).hexdigest()[:20]

    def export_url(self, base_url: str, group_id: str) -> str:
        sig = self.sign(f"export:{group_id}")
        base_url = self.config.object_store_url or base_url
        return f"{base_url}/_export/{quote(group_id, safe='')}.jsonl.gz?sig={sig}"

    def artifact_url(self, base_url: str, job_id: str) -> str:
        sig = self.sign(f"artifact:{job_id}")
        base_url = self.config.object_store_url or base_url
        return f"{base_url}/_oss/artifacts/{quote(job_id, safe='')}/result.tgz?sig={sig}"

    def export_file(self, group_id: str) -> bytes:
        def build() -> bytes:
            jobs = list(self.dataset.iter_group_jobs(group_id))
            lines = payloads.export_lines(group_id, jobs, self.config.trajectory_steps)
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines)
            return gzip.compress(text.encode("utf-8"), compresslevel=1, mtime=0)

        return self.memoised("export", group_id, build)

    def _internal(self, raw_path: str, query: dict[str, str]) -> tuple[str, Response]:
        parts = raw_path.strip("/").split("/")
        sig = query.get("sig", "")
        if parts[0] == "_sso":
            page = ("<html><head><title>统一登录 SSO login</title></head>"
                    "<body>login required</body></html>").encode()
            return "_sso", Response(body=page, content_type="text/html;charset=utf-8")
        if parts[0] == "_export" and len(parts) == 2 and parts[1].endswith(".jsonl.gz"):
            gid = unquote(parts[1][: -len(".jsonl.gz")])
            if not hmac.compare_digest(sig, self.sign(f"export:{gid}")):
                return "_export", error_response(403, "signature does not match")
            if self.dataset.group(gid) is None:
                return "_export", error_response(404, f"group not found: {gid}")
            return "_export", Response(body=self.export_file(gid),
                                       content_type="application/octet-stream")
        if parts[0] == "_oss" and len(parts) == 4 and parts[1] == "artifacts":
            jid = unquote(parts[2])
            if not hmac.compare_digest(sig, self.sign(f"artifact:{jid}")):
                return "_oss", error_response(403, "signature does not match")
            job = self.dataset.job(jid)
            if job is None:
                return "_oss", error_response(404, f"job not found: {jid}")
            try:
                return "_oss", handlers.artifact_body(self, job)
            except ApiError as exc:
                return "_oss", error_response(exc.status, exc.message)
        return "_unknown", error_response(404, "not found")

    # ------------------------------------------------------------ dispatch
    def handle(self, method: str, target: str, headers: Headers, raw_body: bytes) -> Response:
        """Answer one request: dispatch, then ``Range``, then a seeded random fault."""
        self.live.tick(target)
        name, resp, faulted = self._dispatch(method, target, headers, raw_body)
        if name in RANGE_ENDPOINTS:
            if headers.get("range"):
                self.state.count("range_requests")
            if self.config.range_support:
                resp = apply_range(resp, headers.get("range"))
        if name == "unauthorized" or faulted:
            return resp  # a 401 stays a 401; an explicitly injected fault wins
        plan = self.fault_plan
        if plan.rate > 0:
            decided = plan.decide(method, target, self.state.occurrence(method, target))
            if decided is not None:
                kind, n = decided
                self.state.count("faults")
                self.state.count(f"fault:{kind}")
                resp = fault_response(kind, n, resp)
        return resp

    def _dispatch(self, method: str, target: str, headers: Headers,
                  raw_body: bytes) -> tuple[str, Response, bool]:
        """(endpoint name, answer, whether an explicitly injected fault was used)."""
        raw_path, query_string = handlers.split_target(target)
        query = {k: v[-1] for k, v in parse_qs(query_string, keep_blank_values=True).items()}
        host = headers.get("host")
        base_url = f"{self.scheme}://{host}" if host else self.default_base_url

        if handlers.internal_path(raw_path):
            name, resp = self._internal(raw_path, query)
            self.state.count(name)
            return name, *self._with_fault(name, resp)

        try:
            match = self.router.match(method, raw_path)
        except UnicodeDecodeError:
            match = None
            if headers.get("x-api-key") == self.config.api_key:
                return "_bad_path", error_response(400, "path is not valid UTF-8 after percent-decoding"), False
        refused = self.refuse(match, headers)
        if refused is not None:
            self.state.count("unauthorized")
            return "unauthorized", refused, False
        if match is None:
            self.state.count("not_found")
            return "not_found", error_response(404, "not found"), False
        if match.route is None:
            return "_method", error_response(405, f"method not allowed: {method}",
                                             {"Allow": ", ".join(match.allowed)}), False
        name = match.route.name
        self.state.count(name)

        fault = self.state.take_fault(name)
        if fault is not None and fault.kind == "status":
            return name, self._fault_response(fault), True

        body: Any = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                return name, error_response(400, "request body is not valid JSON"), fault is not None
        try:
            self.rules.check(name, query, raw_body, body)
        except Refused as exc:
            return name, error_response(400, str(exc)), fault is not None
        if method == "POST":
            self.state.record_post(name, match.params, body if raw_body else {},
                                   trigger=name.endswith("_trigger"))

        fn = handlers.HANDLERS.get(name)
        if fn is None:  # no behaviour of its own: the answer the table declares (generated.py)
            resp = self._generated(self.router.endpoints[name], match.params, query, body)
        else:
            req = Request(method, name, match.params, query, body, headers, base_url)
            try:
                resp = fn(self, req)
            except ApiError as exc:
                resp = error_response(exc.status, exc.message)
            except Exception as exc:  # noqa: BLE001 - a handler bug must still answer
                resp = error_response(500, f"sandbox handler {name} failed: {exc!r}")
        if fault is not None:
            resp.fault = fault.kind
        return name, resp, fault is not None

    def _generated(self, endpoint: Endpoint, params: dict[str, str], query: dict[str, str], body: Any) -> Response:
        """The answer of an endpoint without a handler, made from its declared response shape."""
        variables = generated.request_variables(endpoint, params, query, body)
        if endpoint.response.is_json:
            settled = self._settled.get(endpoint.name)
            if settled is None:
                settled = self._settled[endpoint.name] = generated.settled_fields(self.model, endpoint.name)
            return json_response(generated.json_answer(endpoint, variables, self.dataset.seed, settled))
        data, media = generated.body_answer(endpoint, variables, self.dataset.seed)
        return Response(body=data, content_type=media)

    def refuse(self, match: Any, headers: Headers) -> Response | None:
        """The answer to a request whose key is wrong for the endpoint's service, else None.

        Each service's auth header and refusal statuses are the table's (``services:``; the
        default service also for paths that match nothing).  A service that answers 403 (the
        AgentPlatform) answers 401 without a key or with an expired one, 403 with a wrong one;
        the others 401."""
        route = match.route if match is not None else None
        endpoint = self.router.endpoints.get(route.name) if route is not None else None
        spec = self.model
        service = spec.services.get(endpoint.service) if endpoint is not None else spec.default_service
        service = service or spec.default_service
        given = headers.get(service.auth_header)
        if given == self.config.key_of(service.name):
            return None
        if 403 not in service.auth_statuses:
            return error_response(401, "invalid api key")
        if not given or given.startswith("expired-"):  # an expired key: 401, as a missing one
            return error_response(401, "missing or expired api key")
        return error_response(403, "forbidden: invalid api key")

    def _with_fault(self, name: str, resp: Response) -> tuple[Response, bool]:
        fault = self.state.take_fault(name)
        if fault is None:
            return resp, False
        if fault.kind == "status":
            return self._fault_response(fault), True
        resp.fault = fault.kind
        return resp, True

    @staticmethod
    def _fault_response(fault: Fault) -> Response:
        headers = {}
        if fault.retry_after is not None:
            ra = fault.retry_after
            headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        return json_response({"error": f"injected fault: HTTP {fault.status}"},
                             fault.status, headers)
