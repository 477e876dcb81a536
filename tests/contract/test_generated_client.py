"""Others can build on `bl describe --openapi`: a generated client works against the sandbox.

openapi-python-client (an independent generator) turns the document into a
Python package in a temporary directory, offline.  It must not drop any
response (it warns for each one it cannot type, and ``--fail-on-warning``
makes that an error), and the generated calls must parse the sandbox's
answers into their typed models: one job, a paged list, a binary download,
metrics whose sections are lists or objects, and an error body.  Its parsers
must also take every example answer of the contract (``support.CONTRACT_ANSWERS``:
``metrics: [2]``, steps as plain numbers, fields it does not know...), which a
model built from a too narrow schema would crash on.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import httpx
import pytest
from support import CONTRACT_ANSWERS, with_new_fields

from benchloop.surface.openapi import openapi_document
from benchloop.table.load import load_model

API_KEY = "generated-client-key"
PACKAGE = "bl_generated_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """(the generator's output, the generated package imported)."""
    root = tmp_path_factory.mktemp("generated")
    document = root / "openapi.json"
    document.write_text(json.dumps(openapi_document(load_model())), encoding="utf-8")
    config = root / "config.json"
    # No post hooks: formatting the generated code is not what is tested (and needs ruff on PATH).
    config.write_text(json.dumps({"package_name_override": PACKAGE, "post_hooks": []}), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(root / PACKAGE), "--config", str(config), "--fail-on-warning"],
        capture_output=True, text=True, timeout=120, cwd=root)
    sys.path.insert(0, str(root))
    try:
        yield run, importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def client(generated, make_sandbox):
    sandbox = make_sandbox(groups=1, jobs_per_group=12, api_key=API_KEY)
    _, package = generated
    auth = importlib.import_module(f"{PACKAGE}.client").AuthenticatedClient(
        base_url=sandbox.url, token=API_KEY, prefix="", auth_header_name="X-API-Key")
    with auth as opened:
        yield opened, sandbox


def api(name: str):
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def model(name: str):
    return getattr(importlib.import_module(f"{PACKAGE}.models"), name)


def test_the_generator_drops_no_response(generated):
    run, _ = generated
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING" not in run.stdout + run.stderr
    assert "omitted" not in run.stdout + run.stderr


def direct(sandbox, path: str, **params) -> httpx.Response:
    response = httpx.get(f"{sandbox.url}{path}", params=params, headers={"X-API-Key": API_KEY})
    assert response.status_code == 200
    return response


def test_a_job_parses(client):
    opened, sandbox = client
    job = api("overview.job").sync(client=opened, job="G1-J0003")
    assert isinstance(job, model("Job"))
    assert job.to_dict() == direct(sandbox, "/openapi/jobs/G1-J0003").json()
    assert job.job_id == "G1-J0003" and job.group_id == "G1" and isinstance(job.status, str)


def test_a_paged_list_parses(client):
    opened, sandbox = client
    page = api("jobs.job_list").sync(client=opened, group_id="G1", skip=5, limit=4)
    assert isinstance(page, model("JobPage"))
    assert page.total == 12 and len(page.jobs) == 4
    assert [job.to_dict() for job in page.jobs] == direct(sandbox, "/openapi/jobs", group_id="G1", skip=5,
                                                          limit=4).json()["jobs"]
    assert isinstance(page.jobs[0], model("JobSummary"))


def test_a_binary_download_parses(client):
    opened, sandbox = client
    file = api("artifacts.job_artifact_download").sync(client=opened, job="G1-J0001")
    assert isinstance(file, importlib.import_module(f"{PACKAGE}.types").File)
    expected = direct(sandbox, "/openapi/jobs/G1-J0001/artifacts/download").content
    assert file.payload.read() == expected and expected.startswith(b"\x1f\x8b")


def test_sections_that_are_lists_or_objects_parse(client):
    """A job's run_metrics is a list of entries, a group's an object: both are typed."""
    opened, _ = client
    job = api("metrics.job_metrics").sync(client=opened, job="G1-J0001")
    run = job.run_metrics
    assert isinstance(run, list) and isinstance(run[0], model("JobRunMetrics"))
    assert float(run[0].duration_s) > 0  # a number, as a string
    group = api("metrics.group_metrics_overall").sync(client=opened, group="G1")
    assert isinstance(group.run_metrics, model("GroupRunMetrics")) and group.run_metrics.job_count == 12
    # Fields the table does not name (the backend adds what it likes) are kept, not refused.
    assert "internal_debug_field" in group.run_metrics.additional_properties


def test_an_error_parses_as_the_error_body(client):
    opened, _ = client
    error = api("overview.job").sync(client=opened, job="NOPE")
    assert isinstance(error, model("Error")) and error.error == "job not found: NOPE"


def _operation_module(name: str):
    """The generated module of an operation (grouped by its first tag; ``ap-cmd`` is ``ap_cmd``)."""
    import pkgutil

    api = importlib.import_module(f"{PACKAGE}.api")
    for tag in pkgutil.iter_modules(api.__path__):
        try:
            return importlib.import_module(f"{PACKAGE}.api.{tag.name}.{name}")
        except ModuleNotFoundError:
            continue
    raise AssertionError(f"no generated module for {name}")


CASES = [(name, i, answer) for name, answers in CONTRACT_ANSWERS.items() for i, answer in enumerate(answers)]


@pytest.mark.parametrize(("endpoint", "i", "answer"), CASES, ids=[f"{n}-{i}" for n, i, _ in CASES])
def test_the_generated_parsers_take_the_contracts_answers(generated, endpoint, i, answer):
    module = _operation_module(endpoint)
    client = importlib.import_module(f"{PACKAGE}.client").Client(base_url="http://unused")
    for body in (answer, with_new_fields(answer)):
        parsed = module._parse_response(client=client, response=httpx.Response(200, json=body))
        assert parsed is not None
        assert not isinstance(parsed, model("Error"))
        if hasattr(parsed, "to_dict"):  # a model keeps what it read (fields it does not know too)
            assert parsed.to_dict() == body
