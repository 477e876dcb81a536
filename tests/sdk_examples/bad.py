"""Misuses of the Python client that mypy must reject (tests/contract/test_sdk_typing.py).

Each line marked ``# E`` is one error the stubs must catch; it is never executed.
"""

from __future__ import annotations

from benchloop import Client

with Client() as bl:
    bl.metrics.get(jobs=["J1"])  # E: unknown keyword
    bl.metrics.get(group="G1", scope="everything")  # E: not one of the choices
    bl.jobs.get(group="G1", page="2")  # E: page is an int
    print(bl.trajectory.download(group="G1").items)  # E: DownloadResult has no items
    bl.metrics.download(group="G1").append(1)  # E: a download returns a DownloadResult
    bl.overview.iter(group="G1")  # E: overview does not paginate
    bl.brm.run(group="G1", steps=["10"])  # E: steps are integers
    bl.metrics.get("G1")  # E: keywords only
    bl.jobs.get(group="G1", status="FAILED")  # E: not one of the known statuses
    bl.jobs.get(group="G1")[0]["jobs"][0]["job_id"] + 1  # E: a job id is a str
    bl.compare(group=["B", "C"])[0]["paired"]["p_valu"]  # E: no such field of a comparison
