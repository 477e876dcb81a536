"""The Python client's objects cross process boundaries: its errors survive a pickle round trip,
a partial failure travels back from a ``multiprocessing`` pool, and a client refuses
credentials in its host without showing them.

Against the sandbox. Found in round three of the reliability review (docs/reliability.md, "Round
three: the engine and the client"): each test fails on the code before its fix. Nothing in httpx
is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import multiprocessing
import pickle
from typing import Any

import pytest
from support import API_KEY

import benchloop


# ===================================================================== client objects
def _failures() -> list[Any]:
    result = benchloop.DownloadResult(["out/J1_report.md"], [], [("NOPE", "API error 404: {}")])
    return [benchloop.PartialFailure([("NOPE", "API error 404: {}")], result),
            benchloop.PartialFailure([("NOPE", "API error 404: {}")], [{"job_id": "J1"}]),
            benchloop.NetworkError([("J1", "network: connection refused")], [])]


@pytest.mark.parametrize("error", _failures(), ids=["partial-download", "partial-get", "network"])
def test_the_clients_errors_survive_a_pickle_round_trip(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert copy.failures == error.failures and copy.results == error.results


def _fails_in_a_worker(url: str) -> None:
    with benchloop.Client(host=url, api_key=API_KEY, retry=0) as client:
        client.metrics.get(job=["G1-J0001", "NOPE"])


def test_a_partial_failure_travels_back_from_a_multiprocessing_pool(sandbox):
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(_fails_in_a_worker, (sandbox.url,))
        with pytest.raises(benchloop.PartialFailure) as caught:
            pending.get(timeout=60)  # was: the pool's result thread died unpickling it; get() waited
    assert caught.value.failures[0][0] == "NOPE"
    assert [m["job_id"] for m in caught.value.results] == ["G1-J0001"]


@pytest.mark.parametrize("host", ["http://user:SECRET-KEY-1234@127.0.0.1:9",
                                  "https://SECRET-KEY-1234@backend.example:8443/base"])
def test_a_client_refuses_credentials_in_the_host_without_showing_them(host):
    with pytest.raises(benchloop.UsageError) as caught:
        benchloop.Client(host=host, api_key="k")
    shown = str(caught.value)
    assert "SECRET-KEY-1234" not in shown and "***@" in shown and "user info" in shown, shown
