"""Type stubs of the Python client, generated from spec/benchloop.yaml by codegen/stubs.py.

Do not edit: run `make docs`.  `make docs-check` fails when this file is stale.
"""

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, overload

from ..table.model import Resource
from .results import DownloadResult

class ResourceClient:
    resource: Resource
    def __init__(self, client: Client) -> None: ...

def attribute(name: str) -> str: ...

class Client:
    """A client of the benchmark-analysis backend, generated from the endpoint table."""

    metrics: MetricsResource
    overview: OverviewResource
    jobs: JobsResource
    compare: CompareResource
    tasks: TasksResource
    report: ReportResource
    trajectory: TrajectoryResource
    metadata: MetadataResource
    artifacts: ArtifactsResource
    pull: PullResource
    rsi: RsiResource
    brm: BrmResource
    host: str
    profile: str | None
    output_dir: str
    concurrency: int
    def __init__(self, host: str | None = None, api_key: str | None = None, profile: str | None = None,
                 config: str | os.PathLike[str] | None = None, concurrency: int = 5, retry: int = 4,
                 timeout: float = 300.0, *, output_dir: str | os.PathLike[str] | None = None,
                 ca_bundle: str | os.PathLike[str] | None = None, pretty: bool = True,
                 progress: Callable[[str], Any] | None = None) -> None: ...
    def close(self) -> None: ...
    def cancel(self) -> None: ...
    def resume(self) -> None: ...
    def __enter__(self) -> Client: ...
    def __exit__(self, *exc_info: Any) -> None: ...
    @property
    def resources(self) -> list[str]: ...


class MetricsResource(ResourceClient):
    """Run metrics of jobs, and overall or per-job metrics of groups."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'all'] = 'all') -> list[Any]:
        """Print metrics as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'all'] = 'all', output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write metrics files under the output root."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        """Every item (metrics) of every page that `bl metrics get` walks, one page at a time."""
        ...


class OverviewResource(ResourceClient):
    """A job with its statistics, or a group's evaluation summary and tasks."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['summary', 'tasks', 'all'] = 'all') -> list[Any]:
        """Print overviews as a JSON array, one element per id."""
        ...


class JobsResource(ResourceClient):
    """Job lists of groups."""
    def get(self, *, group: str | Sequence[str] | None = None, page: int = 1, page_size: int = 50, all: bool = False, template: str | None = None, status: str | None = None, instance_id: str | None = None) -> list[Any]:
        """Print one page (or with --all every page) of each group's jobs."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, page_size: int = 1000, template: str | None = None, status: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write every job of each group to <group>/job_list.json."""
        ...
    def table(self, *, group: str | Sequence[str] | None = None, fields: str | Sequence[str] | None = None, template: str | None = None, status: str | None = None, instance_id: str | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id') -> list[Any]:
        """Print one flat row per job of each group (every page): its job-list fields, instance, score, pass, run and token metrics; numbers are numbers."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None, page_size: int = 50, template: str | None = None, status: str | None = None, instance_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Every item (jobs) of every page that `bl jobs get` walks, one page at a time."""
        ...


class CompareResource(ResourceClient):
    """Compare benchmark runs instance by instance, with 95% confidence intervals."""
    def compare(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', status: str | None = None, template: str | None = None, report: str | os.PathLike[str] | None = None) -> list[Any]:
        """Compare every group with the first (the baseline): pass rates and mean scores over instances, paired differences with 95% CIs and p-values, costs, the instances that changed. --output table and markdown print a readable summary of it (a difference whose CI excludes 0 is marked *)."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', status: str | None = None, template: str | None = None, report: str | os.PathLike[str] | None = None) -> list[Any]:
        """Compare every group with the first (the baseline): pass rates and mean scores over instances, paired differences with 95% CIs and p-values, costs, the instances that changed. --output table and markdown print a readable summary of it (a difference whose CI excludes 0 is marked *)."""
        ...


class TasksResource(ResourceClient):
    """Evaluation task lists of groups."""
    def get(self, *, group: str | Sequence[str] | None = None, page: int = 1, page_size: int = 50, all: bool = False, search: str | None = None, status: str | None = None) -> list[Any]:
        """Print one page (or with --all every page) of each group's tasks."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, page_size: int = 1000, search: str | None = None, status: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write every task of each group to <group>/task_list.json."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None, page_size: int = 50, search: str | None = None, status: str | None = None) -> Iterator[dict[str, Any]]:
        """Every item (tasks) of every page that `bl tasks get` walks, one page at a time."""
        ...


class ReportResource(ResourceClient):
    """Pre-analysis reports (markdown) of jobs and groups."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None) -> list[Any]:
        """Print the raw report responses as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write report markdown; a group writes its summary and every job's report."""
        ...
    def trigger(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, include_passed: bool = False) -> list[Any]:
        """Ask the backend to (re)build reports; prints the raw responses."""
        ...


class TrajectoryResource(ResourceClient):
    """Trajectories of jobs, of whole groups (server-side export) and of download tasks."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, download_timeout: int = 1800) -> list[Any]:
        """Print trajectories as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, download_timeout: int = 1800, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write trajectory files; a download task becomes one ZIP archive. A group is one server-side export, or with --status/--template/--instance-id its matching jobs one file each."""
        ...


class MetadataResource(ResourceClient):
    """Job metadata of download tasks."""
    def download(self, *, task_id: str | Sequence[str] | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write the metadata of every job of a download task into one ZIP archive."""
        ...


class ArtifactsResource(ResourceClient):
    """Artifacts (result archives) of jobs, groups and download tasks."""
    @overload
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: Literal[True], status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> list[Any]: ...
    @overload
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: Literal[False] = False, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult: ...
    @overload
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: bool = False, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> list[Any] | DownloadResult:
        """Download artifacts through the backend proxy; --list-only prints the listing instead."""
        ...


class PullResource(ResourceClient):
    """Download several resources of groups or jobs in one go (sections run concurrently)."""
    def pull(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, sections: str | Sequence[str] | None = None, download_timeout: int = 1800, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Run the download commands of the chosen sections for each id; files land where those commands put them."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, sections: str | Sequence[str] | None = None, download_timeout: int = 1800, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Run the download commands of the chosen sections for each id; files land where those commands put them."""
        ...


class RsiResource(ResourceClient):
    """RSI analyses (markdown) of jobs and groups; status is not_created, creating or created."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None) -> list[Any]:
        """Print the raw RSI responses as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, status: str | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write RSI markdown; a group writes its summary and every job's analysis."""
        ...
    def trigger(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, include_passed: bool = False) -> list[Any]:
        """Ask the backend to create RSI analyses; prints the raw responses."""
        ...


class BrmResource(ResourceClient):
    """Behaviour analyses (BRM) of groups."""
    def run(self, *, group: str | Sequence[str] | None = None, steps: int | Sequence[int] | None = None, sample_size: int = 512, scoring_limit: int = 32) -> list[Any]:
        """Start a behaviour analysis of one group; prints the created task."""
        ...
    def get(self, *, task_id: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'status', 'all'] = 'all') -> list[Any]:
        """Print behaviour analyses (overall scores, detail patterns, status, or all) of task uids."""
        ...
    def status(self, *, task_id: str | Sequence[str] | None = None) -> list[Any]:
        """Print the status of behaviour analyses (same as get --scope status)."""
        ...
    def list(self, *, group: str | Sequence[str] | None = None) -> list[Any]:
        """Print the behaviour analyses of groups."""
        ...
