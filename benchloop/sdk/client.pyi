"""Type stubs of the Python client, generated from spec/benchloop.yaml by codegen/stubs.py.

Do not edit: run `make docs`.  `make docs-check` fails when this file is stale.
"""

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypedDict, overload

from ..table.model import Resource
from .dataset import Dataset
from .results import DownloadResult

# What the methods return (the table's output schemas; every key may be missing).
# The metric's values (for `eval`, the evaluation of the job's task).
EvalMetricData = TypedDict('EvalMetricData', {'task_score': float, 'resolved': bool}, total=False)
# One entry of a job's `metrics` list: an evaluation result `{type, data}` (type `eval` carries the task score).
EvalMetric = TypedDict('EvalMetric', {'type': str, 'data': EvalMetricData}, total=False)
# Run metrics of one job. Values usually arrive as strings holding a decimal number (`"12.5"`); some backends send plain numbers. Fields are counts unless a unit is given.
JobRunMetrics = TypedDict('JobRunMetrics', {'duration_s': str | float, 'duration_api_s': str | float, 'thinking_total_length': str | float, 'tokens_sent': str | float, 'context_peak': str | float, 'num_turns': str | float, 'api_call_count': str | float, 'api_error_count': str | float, 'tool_call_count': str | float, 'tool_error_count': str | float, 'rate_limit_count': str | float}, total=False)
# Token counts of one job, recomputed by the backend with the tokenizer it names. Counts are in tokens of that tokenizer; the exact counting rules are not documented.
JobTokenizedMetrics = TypedDict('JobTokenizedMetrics', {'schema_version': str, 'tokenizer_class': str, 'tokenizer_dedup_input': float, 'tokenizer_user_input': float, 'tokenizer_output_total': float, 'tokenizer_output_per_turn': float, 'tokenizer_single_seq_context': float, 'tokenizer_context_peak': float, 'llm_calls': float}, total=False)
# Metrics of one job. `run_metrics` and `tokenized_metrics` come as a list (one entry per run, usually one) or as one object; both are valid. A running job has empty sections.
JobMetrics = TypedDict('JobMetrics', {'job_id': str | None, 'metrics': list[Any], 'run_metrics': list[JobRunMetrics] | JobRunMetrics, 'tokenized_metrics': list[JobTokenizedMetrics] | JobTokenizedMetrics}, total=False)
# Run metrics aggregated over a group's jobs (the fields bl keeps; the backend sends more, which `bl metrics` drops). `avg_` is the mean over the jobs that have run metrics, `total_` the sum; null when no job has any.
GroupRunMetrics = TypedDict('GroupRunMetrics', {'job_count': int | None, 'avg_duration_s': float | None, 'avg_duration_api_s': float | None, 'avg_thinking_length': float | None, 'avg_api_call_count': float | None, 'total_api_error_count': float | None, 'avg_api_error_rate': float | None, 'avg_tool_call_count': float | None, 'total_tool_error_count': float | None, 'avg_tool_error_rate': float | None, 'total_rate_limit_count': float | None, 'avg_num_turns': float | None}, total=False)
# Tokenizer counts aggregated over a group's jobs (the fields bl keeps; the backend sends more, which `bl metrics` drops): `avg_` mean, `max_` largest, `total_` sum over the jobs that have counts, in tokens; null when no job has any.
GroupTokenizedMetrics = TypedDict('GroupTokenizedMetrics', {'tokenized_job_count': int | None, 'avg_tokenizer_dedup_input': float | None, 'max_tokenizer_dedup_input': float | None, 'total_tokenizer_dedup_input': float | None, 'avg_tokenizer_user_input': float | None, 'max_tokenizer_user_input': float | None, 'total_tokenizer_user_input': float | None, 'avg_tokenizer_output_total': float | None, 'max_tokenizer_output_total': float | None, 'total_tokenizer_output_total': float | None, 'avg_tokenizer_output_per_turn': float | None, 'max_tokenizer_output_per_turn': float | None, 'avg_tokenizer_single_seq_context': float | None, 'max_tokenizer_single_seq_context': float | None, 'avg_tokenizer_context_peak': float | None, 'max_tokenizer_context_peak': float | None, 'avg_llm_calls': float | None, 'max_llm_calls': float | None, 'total_llm_calls': float | None}, total=False)
# Aggregated metrics of a group. Either section may be one object or a list of them.
GroupMetricsOverall = TypedDict('GroupMetricsOverall', {'group_id': str, 'run_metrics': GroupRunMetrics | list[GroupRunMetrics], 'tokenized_metrics': GroupTokenizedMetrics | list[GroupTokenizedMetrics]}, total=False)
# One job's metrics in a page of a group's per-job metrics (same sections as a job's metrics).
MetricsRow = TypedDict('MetricsRow', {'job_id': str, 'metrics': list[Any], 'run_metrics': list[JobRunMetrics] | JobRunMetrics, 'tokenized_metrics': list[JobTokenizedMetrics] | JobTokenizedMetrics}, total=False)
# Per-job metrics of a group, every page (`bl metrics get -g --scope detail`).
GroupMetricsDetail = TypedDict('GroupMetricsDetail', {'group_id': str, 'total': int | None, 'metrics': list[MetricsRow], 'tokenized_metrics': GroupTokenizedMetrics | list[GroupTokenizedMetrics] | None}, total=False)
MetricsGetGroup = TypedDict('MetricsGetGroup', {'group_id': str, 'overall': GroupMetricsOverall, 'detail': GroupMetricsDetail}, total=False)
# One job.
Job = TypedDict('Job', {'job_id': str, 'group_id': str | None, 'created_at': str, 'template': str, 'status': str, 'instance_id': str, 'score': float | None, 'model': str}, total=False)
# Job statistics of a group (or of every job when no group is given).
JobStats = TypedDict('JobStats', {'group_id': str | None, 'total': int, 'by_status': dict[str, Any]}, total=False)
OverviewGetJob = TypedDict('OverviewGetJob', {'job_id': str, 'job': Job, 'stats': JobStats}, total=False)
# Evaluation summary of a group, printed as it came. Only `score` is documented (fixtures show 0.8); the other figures are what the sandbox sends, counted over the group's tasks.
EvalSummary = TypedDict('EvalSummary', {'group_id': str, 'score': float | None, 'pass_rate': float | None, 'task_count': int, 'job_count': int, 'passed': int, 'failed': int, 'error': int, 'pending': int}, total=False)
# One evaluation task of a group.
Task = TypedDict('Task', {'task_id': str, 'id': str, 'name': str, 'status': str, 'score': float | None}, total=False)
# One page of a group's evaluation tasks.
TaskPage = TypedDict('TaskPage', {'tasks': list[Task], 'total': int}, total=False)
OverviewGetGroup = TypedDict('OverviewGetGroup', {'group_id': str, 'summary': EvalSummary, 'tasks': TaskPage}, total=False)
# A job as it appears in a job list.
JobSummary = TypedDict('JobSummary', {'job_id': str, 'id': str, 'group_id': str | None, 'created_at': str, 'template': str, 'status': str, 'instance_id': str, 'updated_at': str | None}, total=False)
JobsGetGroup = TypedDict('JobsGetGroup', {'group_id': str, 'jobs': list[JobSummary], 'total': int}, total=False)
# The jobs of a group once none is in a status that is not final (`bl jobs wait`), counted by status.
GroupJobsDone = TypedDict('GroupJobsDone', {'group_id': str, 'total': int, 'by_status': dict[str, Any]}, total=False)
JobsTableGroup = TypedDict('JobsTableGroup', {'group_id': str | None, 'job_id': str | None, 'created_at': str | None, 'template': str | None, 'status': str | None, 'instance_id': str | None, 'instance': str | None, 'score': float | None, 'pass': bool | None, 'duration_s': float | None, 'duration_api_s': float | None, 'num_turns': float | None, 'api_call_count': float | None, 'api_error_count': float | None, 'tool_call_count': float | None, 'tool_error_count': float | None, 'rate_limit_count': float | None, 'tokens_sent': float | None, 'thinking_total_length': float | None, 'context_peak': float | None, 'tokenizer_dedup_input': float | None, 'tokenizer_user_input': float | None, 'tokenizer_output_total': float | None, 'tokenizer_context_peak': float | None, 'llm_calls': float | None}, total=False)
# Per group of a comparison: its jobs, instances, pass rate and mean score with 95% t intervals (docs/compare.md).
GroupComparison = TypedDict('GroupComparison', {'group_id': str, 'jobs': int, 'jobs_scored': int, 'instances': int, 'clusters': int, 'pass_rate': float | None, 'pass_rate_ci95': list[float] | None, 'mean': float | None, 'mean_ci95': list[float] | None, 'paired_pass_rate': float | None, 'paired_mean': float | None}, total=False)
# The paired comparison over the instances both groups scored (docs/compare.md).
PairedComparison = TypedDict('PairedComparison', {'instances': int, 'clusters': int, 'df': float | None, 'effective_clusters': float | None, 'pass_rate_difference': float | None, 'se': float | None, 'ci95': list[float] | None, 'ci95_adjusted': list[float] | None, 'ci90': list[float] | None, 'p_value': float | None, 'p_value_adjusted': float | None, 'sign_test_p': float, 'mde': float | None, 'margin': float | None, 'tost_p': float | None, 'equivalent': bool | None, 'verdict': str, 'mean_difference': float | None, 'mean_difference_se': float | None, 'mean_difference_ci95': list[float] | None, 'mean_difference_p_value': float | None, 'mean_difference_p_value_adjusted': float | None, 'improved': int, 'regressed': int, 'unchanged': int}, total=False)
# The jobs of one value of --by in both groups, compared as a filter on that value would.
SliceComparison = TypedDict('SliceComparison', {'key': str | None, 'baseline_jobs': int, 'candidate_jobs': int, 'paired': PairedComparison}, total=False)
# One cluster of --cluster: its paired instances and their mean change of pass rate.
ClusterDifference = TypedDict('ClusterDifference', {'cluster': str, 'instances': int, 'improved': int, 'regressed': int, 'pass_rate_difference': float | None}, total=False)
# The instance in the baseline.
InstanceComparisonBaseline = TypedDict('InstanceComparisonBaseline', {'pass_rate': float, 'mean': float | None, 'jobs': list[str]}, total=False)
# The instance in the candidate.
InstanceComparisonCandidate = TypedDict('InstanceComparisonCandidate', {'pass_rate': float, 'mean': float | None, 'jobs': list[str]}, total=False)
# One instance whose pass rate changed between the baseline and the candidate.
InstanceComparison = TypedDict('InstanceComparison', {'instance': str, 'difference': float, 'p_value': float, 'q_value': float, 'beyond_noise': bool, 'baseline': InstanceComparisonBaseline, 'candidate': InstanceComparisonCandidate}, total=False)
# How many changed instances are beyond noise (docs/compare.md, Changes beyond noise).
ChangeEvidence = TypedDict('ChangeEvidence', {'test': str, 'fdr': float, 'instances': int, 'changed': int, 'aa_expected': float, 'aa_share': float | None, 'beyond_noise': int, 'reachable': int, 'smallest_p': float | None, 'trials_needed': int | None, 'summary': str}, total=False)
# What an A/A comparison (another run like this one) gives: the noise floor (docs/compare.md, The noise floor).
AAFloor = TypedDict('AAFloor', {'instances': int, 'trials': float | None, 'within_variance': float | None, 'se': float | None, 'half_width': float | None, 'changed_expected': float | None, 'share_changed': float | None, 'summary': str}, total=False)
# With --sequential or --watch only: the pass rate's paired difference over the instances finished in both runs, judged by a confidence sequence, valid however often one looks (docs/compare.md, 'Looking while runs progress'); the verdict and the summary then come from it.
SequentialComparison = TypedDict('SequentialComparison', {'method': str, 'instances': int, 'instances_waiting': int, 'horizon': int, 'level': float, 'pass_rate_difference': float | None, 'interval': list[float] | None, 'p_value': float | None, 'p_value_adjusted': float | None, 'verdict': str, 'running_jobs': int}, total=False)
# Divergences of one kind, with how often its action is taken in passing and failing trials of its instances.
DivergenceKind = TypedDict('DivergenceKind', {'kind': str, 'shape': str, 'tool': str | None, 'argument': str | None, 'count': int, 'instances': list[str], 'in_passing': dict[str, Any], 'in_failing': dict[str, Any], 'explains_nothing': bool, 'fail_reasons': dict[str, Any]}, total=False)
DivergencesDirectionsItem = TypedDict('DivergencesDirectionsItem', {'direction': str, 'instances': int, 'kinds': list[DivergenceKind], 'fail_reasons': dict[str, Any], 'lines': list[str]}, total=False)
# Where a passing and a failing trial of one changed instance first differ (--why).
Divergence = TypedDict('Divergence', {'instance': str, 'direction': str, 'difference': float, 'passing': dict[str, Any], 'failing': dict[str, Any], 'step': int | None, 'shape': str, 'kind': str, 'tool': str | None, 'argument': str | None, 'changes': list[dict[str, Any]], 'more_changes': int}, total=False)
# With --why: where the candidate's changed instances part from the baseline, by kind (docs/compare.md).
Divergences = TypedDict('Divergences', {'baseline': str, 'candidate': str, 'picked': str, 'fallback': bool, 'fdr': float, 'changes': str, 'changed': int, 'looked_at': int, 'note': str | None, 'directions': list[DivergencesDirectionsItem], 'divergences': list[Divergence]}, total=False)
# A candidate group compared with the baseline, instance by instance (`bl compare`; every figure is defined in docs/compare.md).
Comparison = TypedDict('Comparison', {'baseline': str, 'candidate': str, 'metric': str, 'pass_threshold': float, 'unit': str, 'cluster': str | None, 'by': str | None, 'margin': float | None, 'summary': str, 'groups': list[GroupComparison], 'paired': PairedComparison, 'costs': dict[str, Any], 'slices': list[SliceComparison], 'cluster_differences': list[ClusterDifference], 'instances': list[InstanceComparison], 'evidence': ChangeEvidence, 'noise_floor': AAFloor | None, 'only_baseline': list[str], 'only_candidate': list[str], 'warnings': list[str], 'sequential': SequentialComparison, 'divergences': Divergences}, total=False)
# Seeded random deals of each instance's trials (two or more) into two halves: A/A pseudo-runs of one run.
NoiseSplits = TypedDict('NoiseSplits', {'count': int, 'seed': int, 'instances': int, 'share_changed': float | None, 'share_changed_expected': float | None, 'difference_sd': float | None, 'difference_sd_expected': float | None, 'difference_interval': list[float] | None}, total=False)
# One run's own noise.
NoiseGroup = TypedDict('NoiseGroup', {'group_id': str, 'instances': int, 'trials': float | None, 'pass_rate': float | None, 'within_variance': float | None, 'aa': AAFloor, 'splits': NoiseSplits}, total=False)
# Two runs of one configuration compared as an A/A.
NoiseRunPair = TypedDict('NoiseRunPair', {'baseline': str, 'candidate': str, 'difference': float | None, 'share_changed': float}, total=False)
# Two or more runs of one configuration: their A/A pairs and the between-run variance (method of moments).
NoiseBetweenRuns = TypedDict('NoiseBetweenRuns', {'runs': int, 'instances': int, 'clusters': int, 'pairs': list[NoiseRunPair], 'difference_sd': float | None, 'between_variance_raw': float, 'between_variance': float, 'share_changed': float | None}, total=False)
# The noise floor of one configuration from its runs (`bl noise`; docs/compare.md, The noise floor).
NoiseFloor = TypedDict('NoiseFloor', {'groups': list[str], 'instances': int, 'within_variance': float | None, 'within_instances': int, 'per_group': list[NoiseGroup], 'between_runs': NoiseBetweenRuns | None, 'aa': AAFloor, 'summary': str}, total=False)
# One row of a plan's instances x trials table.
PlanRow = TypedDict('PlanRow', {'trials': int, 'instances': int | None, 'total_trials': int | None, 'design_effect': float | None}, total=False)
# The trials a fixed instance set needs.
PlanFixed = TypedDict('PlanFixed', {'instances': int, 'trials': int | None, 'power': float | None, 'allocated_trials': int, 'allocated_power': float}, total=False)
# One instance of a Neyman allocation: trials in proportion to sqrt(p(1-p)).
PlanAllocation = TypedDict('PlanAllocation', {'instance': str, 'pass_rate': float | None, 'trials_run': int, 'trials': int, 'run_again': int}, total=False)
# How many instances and trials a decision needs (`bl plan`; docs/compare.md, Planning a run).
Plan = TypedDict('Plan', {'groups': list[str], 'effect': float, 'power': float, 'alpha': float, 'within_variance': float, 'effect_variance': float, 'between_variance': float, 'clusters': int | None, 'table': list[PlanRow], 'fixed': PlanFixed | None, 'allocation': list[PlanAllocation], 'summary': str}, total=False)
# A run's paired difference of pass rate to an earlier run, over the common instances.
TrendDifference = TypedDict('TrendDifference', {'from': str, 'difference': float | None, 'se': float | None, 'ci95': list[float] | None, 'p_value': float | None}, total=False)
# One run of a trend.
TrendRun = TypedDict('TrendRun', {'group_id': str, 'instances': int, 'pass_rate': float | None, 'pass_rate_ci95': list[float] | None, 'own_pass_rate': float | None, 'own_pass_rate_ci95': list[float] | None, 'previous': TrendDifference | None, 'reference': TrendDifference | None, 'limit': float | None, 'flagged': bool}, total=False)
# The pass rate's change per run: per-instance least-squares slopes, averaged, with a t test.
TrendSlope = TypedDict('TrendSlope', {'slope': float | None, 'se': float | None, 'ci95': list[float] | None, 'p_value': float | None, 'df': int | None}, total=False)
# DerSimonian-Laird random-effects mean of the steps between consecutive runs.
TrendSteps = TypedDict('TrendSteps', {'mean': float | None, 'se': float | None, 'ci95': list[float] | None, 'p_value': float | None, 'tau2': float | None, 'steps': int}, total=False)
# A benchmark's pass rate over runs (`bl trend`; docs/compare.md, Trend over runs).
Trend = TypedDict('Trend', {'groups': list[str], 'instances': int, 'alpha': float, 'z': float, 'runs': list[TrendRun], 'slope': TrendSlope, 'steps': TrendSteps, 'flagged': list[str], 'summary': str}, total=False)
# Where two trials first differ (bl divergence): as bl view marks it.
TrialDifference = TypedDict('TrialDifference', {'trials': list[dict[str, Any]], 'step': int | None, 'kind': str, 'note': str, 'changes': list[dict[str, Any]]}, total=False)
TasksGetGroup = TypedDict('TasksGetGroup', {'group_id': str, 'tasks': list[Task], 'total': int}, total=False)
# One pre-analysis report (markdown).
Report = TypedDict('Report', {'content': str | None, 'fail_reason': str | None, 'sub_fail_reason': str | None}, total=False)
# Pre-analysis reports of one job (an empty list when there is none; not a failure).
JobReport = TypedDict('JobReport', {'job_id': str, 'reports': list[Report]}, total=False)
# Counts over the analysed jobs.
GroupReportStats = TypedDict('GroupReportStats', {'fail_reason': dict[str, Any]}, total=False)
# Summary pre-analysis report of a group.
GroupReport = TypedDict('GroupReport', {'group_id': str, 'reports': list[Report], 'stats': GroupReportStats}, total=False)
# Answer to a report (re)build request (printed as it came).
ReportTrigger = TypedDict('ReportTrigger', {'status': str, 'job_id': str, 'group_id': str, 'include_passed': bool}, total=False)
# A media file (image, video) a trajectory references; task downloads fetch each once.
TraceMedia = TypedDict('TraceMedia', {'oss_uri': str, 'mime_type': str}, total=False)
# One piece of a tool's answer in a trajectory; an image or a video names its media file.
TrajectoryContent = TypedDict('TrajectoryContent', {'type': str, 'trace_media': TraceMedia}, total=False)
# One part of a trajectory message (the fields seen).
TrajectoryPart = TypedDict('TrajectoryPart', {'response': list[Any]}, total=False)
# One message of a trajectory step (the fields seen).
TrajectoryMessage = TypedDict('TrajectoryMessage', {'role': str, 'parts': list[Any]}, total=False)
# One step of a trajectory. Steps are free-form; these are the fields seen. Media references may appear anywhere under a step (bl looks for every `trace_media` object); `messages` shows where tool answers usually carry them.
TrajectoryStep = TypedDict('TrajectoryStep', {'step': Any, 'role': str, 'tool': str, 'content': str, 'tokens': float, 'messages': list[Any]}, total=False)
# The raw trajectory of one job (written and printed as it came).
JobTrajectory = TypedDict('JobTrajectory', {'job_id': str, 'trajectory': list[TrajectoryStep], 'steps': list[TrajectoryStep]}, total=False)
GroupTrajectoriesTrajectoriesItem = TypedDict('GroupTrajectoriesTrajectoriesItem', {'job_id': str, 'trajectory': list[TrajectoryStep]}, total=False)
# A group's trajectories from its trace export, job by job in the group's job order (`bl trajectory get -g`).
GroupTrajectories = TypedDict('GroupTrajectories', {'group_id': str, 'trajectories': list[GroupTrajectoriesTrajectoriesItem]}, total=False)
# One step of a trajectory in a line (`bl trajectory steps`, `bl view --output json|table|...`): `bl view` shows it whole.
StepRow = TypedDict('StepRow', {'step': int, 'role': str | None, 'tool': str | None, 'tokens': float | None, 'text': str, 'chars': int, 'fields': list[str], 'first_difference': bool, 'args': str | None}, total=False)
# A job's trajectory as one compact row per step (`bl trajectory steps`; the MCP tool `trajectory_steps`).
TrajectorySteps = TypedDict('TrajectorySteps', {'job_id': str, 'total': int, 'steps': list[StepRow]}, total=False)
# One entry of `bl artifacts download --list-only`: a listing entry with the job (and the group, in group mode) it belongs to.
ArtifactEntry = TypedDict('ArtifactEntry', {'name': str, 'url': str, 'size': int, 'error_code': str, 'job_id': str, 'group_id': str}, total=False)
# The analysis once created, else null.
RsiReport = TypedDict('RsiReport', {'report_md': str, 'summary_md': str}, total=False)
# An RSI (root-cause) analysis of a job or a group.
Rsi = TypedDict('Rsi', {'entity_type': str, 'job_id': str, 'group_id': str, 'status': str, 'report': RsiReport, 'request': dict[str, Any] | None}, total=False)
# Answer to an RSI creation request (printed as it came).
RsiTrigger = TypedDict('RsiTrigger', {'status': str, 'accepted': bool}, total=False)
# A behaviour analysis just created by `bl brm run`, with the group and the sampling mode bl detected.
BehaviorRun = TypedDict('BehaviorRun', {'uid': str, 'task_id': str, 'status': str, 'group_id': str, 'samplingMode': str | None}, total=False)
# A behaviour analysis and its state.
BehaviorTask = TypedDict('BehaviorTask', {'uid': str, 'task_id': str, 'status': str, 'groupId': str, 'samplingMode': str, 'steps': list[int], 'scoringLimit': int, 'sampleSize': int}, total=False)
# Overall scores of a behaviour analysis.
BehaviorSummary = TypedDict('BehaviorSummary', {'totalSamples': int, 'averageOverallScore': float}, total=False)
# The score of one category of a behaviour analysis.
CategoryScore = TypedDict('CategoryScore', {'category': str, 'scoreSum': float}, total=False)
# The overall scores of a behaviour analysis (`bl brm get --scope overall`).
BehaviorOverall = TypedDict('BehaviorOverall', {'task_id': str, 'uid': str, 'summary': BehaviorSummary, 'categoryScores': list[CategoryScore]}, total=False)
# A behaviour pattern found in the sampled steps.
BehaviorPattern = TypedDict('BehaviorPattern', {'id': str, 'name': str, 'triggerRate': float}, total=False)
# Behaviour patterns found, good and bad.
BehaviorPatterns = TypedDict('BehaviorPatterns', {'positive': list[BehaviorPattern], 'negative': list[BehaviorPattern]}, total=False)
# The behaviour patterns of an analysis (`bl brm get --scope detail`).
BehaviorDetail = TypedDict('BehaviorDetail', {'task_id': str, 'uid': str, 'behaviorPatterns': BehaviorPatterns}, total=False)
# Everything of a behaviour analysis (`bl brm get`, the default scope all).
BehaviorAll = TypedDict('BehaviorAll', {'task_id': str, 'uid': str, 'status': BehaviorTask, 'overall': BehaviorOverall, 'detail': BehaviorDetail, 'samplingMode': str}, total=False)
# A group's behaviour analyses (`bl brm list`): each task's `task_id` is its uid.
BehaviorTasksOfGroup = TypedDict('BehaviorTasksOfGroup', {'group_id': str, 'total': int, 'tasks': list[BehaviorTask]}, total=False)


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
    noise: NoiseResource
    plan: PlanResource
    trend: TrendResource
    view: ViewResource
    divergence: DivergenceResource
    tasks: TasksResource
    report: ReportResource
    trajectory: TrajectoryResource
    metadata: MetadataResource
    artifacts: ArtifactsResource
    pull: PullResource
    rsi: RsiResource
    brm: BrmResource
    dataset: Dataset
    host: str
    api_key: str | None
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
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'all'] = 'all') -> list[JobMetrics | MetricsGetGroup]:
        """Print metrics as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'all'] = 'all', output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write metrics files under the output root."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None) -> Iterator[MetricsRow]:
        """Every item (metrics) of every page that `bl metrics get` walks, one page at a time."""
        ...


class OverviewResource(ResourceClient):
    """A job with its statistics, or a group's evaluation summary and tasks."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, scope: Literal['summary', 'tasks', 'all'] = 'all') -> list[OverviewGetJob | OverviewGetGroup]:
        """Print overviews as a JSON array, one element per id."""
        ...


class JobsResource(ResourceClient):
    """Job lists of groups."""
    def get(self, *, group: str | Sequence[str] | None = None, page: int = 1, page_size: int | None = None, all: bool = False, template: str | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, instance_id: str | None = None) -> list[JobsGetGroup]:
        """Print one page (or with --all every page) of each group's jobs."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, page_size: int = 1000, template: str | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write every job of each group to <group>/job_list.json."""
        ...
    def wait(self, *, group: str | Sequence[str] | None = None, interval: float = 5.0, timeout: float | None = None) -> list[GroupJobsDone]:
        """Wait until no job of each group is running (every job in a final status); counts by status on stderr as they change, then each group's counts as JSON. --timeout ends the wait with exit 124."""
        ...
    def table(self, *, group: str | Sequence[str] | None = None, fields: str | Sequence[str] | None = None, template: str | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, instance_id: str | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id') -> list[JobsTableGroup]:
        """Print one flat row per job of each group (every page): its job-list fields, instance, score, pass, run and token metrics; numbers are numbers."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None, page_size: int | None = None, template: str | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, instance_id: str | None = None) -> Iterator[JobSummary]:
        """Every item (jobs) of every page that `bl jobs get` walks, one page at a time."""
        ...


class CompareResource(ResourceClient):
    """Compare benchmark runs instance by instance, with 95% confidence intervals."""
    def compare(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, cluster: str | None = None, margin: float | None = None, by: str | None = None, changes: Literal['largest', 'all', 'improved', 'regressed', 'beyond-noise'] = 'largest', sequential: bool = False, fdr: float = 0.1, dataset: str | os.PathLike[str] | None = None, why: bool = False, why_all: bool = False, per_instance: bool = False, report: str | os.PathLike[str] | None = None, report_dir: str | os.PathLike[str] | None = None) -> list[Comparison]:
        """Compare every group with the first (the baseline): pass rates and mean scores over instances, paired differences with 95% t intervals and p-values (Holm-adjusted over the candidates), a verdict (better, worse or inconclusive), costs, the instances that changed. --output table and markdown lead with the verdict as a sentence. Runs still running: --sequential gives a verdict valid however often you look, --watch waits for the jobs and ends when it is reached."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, cluster: str | None = None, margin: float | None = None, by: str | None = None, changes: Literal['largest', 'all', 'improved', 'regressed', 'beyond-noise'] = 'largest', sequential: bool = False, fdr: float = 0.1, dataset: str | os.PathLike[str] | None = None, why: bool = False, why_all: bool = False, per_instance: bool = False, report: str | os.PathLike[str] | None = None, report_dir: str | os.PathLike[str] | None = None) -> list[Comparison]:
        """Compare every group with the first (the baseline): pass rates and mean scores over instances, paired differences with 95% t intervals and p-values (Holm-adjusted over the candidates), a verdict (better, worse or inconclusive), costs, the instances that changed. --output table and markdown lead with the verdict as a sentence. Runs still running: --sequential gives a verdict valid however often you look, --watch waits for the jobs and ends when it is reached."""
        ...


class NoiseResource(ResourceClient):
    """The noise floor of a benchmark configuration: what two runs of one system differ by."""
    def noise(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, splits: int = 200, seed: int = 0) -> list[NoiseFloor]:
        """The noise floor of one configuration from its runs: within-instance trial variance, seeded splits of each run's trials into two pseudo-runs, what an A/A moves and lists and, with two runs or more, the between-run variance (docs/compare.md)."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, splits: int = 200, seed: int = 0) -> list[NoiseFloor]:
        """The noise floor of one configuration from its runs: within-instance trial variance, seeded splits of each run's trials into two pseudo-runs, what an A/A moves and lists and, with two runs or more, the between-run variance (docs/compare.md)."""
        ...


class PlanResource(ResourceClient):
    """How many instances and trials a decision needs, before the run."""
    def plan(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, effect: float = 0.02, power: float = 0.8, alpha: float = 0.05, trials: int | Sequence[int] | None = None, instances: int | None = None, variance: float | None = None, effect_variance: float = 0.0, between_variance: float | None = None) -> list[Plan]:
        """Plan a comparison from past runs: the instances x trials needed to detect --effect at --power (noncentral t, clusters' design effect), the trials a fixed instance set needs, and their Neyman allocation: which instances to run again and how often (docs/compare.md)."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, effect: float = 0.02, power: float = 0.8, alpha: float = 0.05, trials: int | Sequence[int] | None = None, instances: int | None = None, variance: float | None = None, effect_variance: float = 0.0, between_variance: float | None = None) -> list[Plan]:
        """Plan a comparison from past runs: the instances x trials needed to detect --effect at --power (noncentral t, clusters' design effect), the trials a fixed instance set needs, and their Neyman allocation: which instances to run again and how often (docs/compare.md)."""
        ...


class TrendResource(ResourceClient):
    """How a benchmark moves over runs, and which run is outside noise."""
    def trend(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, alpha: float = 0.05, report: str | os.PathLike[str] | None = None) -> list[Trend]:
        """The runs in the order given: pass rates with intervals, differences to the previous and the first run, the drift, and control limits from the first run's noise floor (docs/compare.md)."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5, unit: str = 'instance_id', dataset: str | os.PathLike[str] | None = None, cluster: str | None = None, alpha: float = 0.05, report: str | os.PathLike[str] | None = None) -> list[Trend]:
        """The runs in the order given: pass rates with intervals, differences to the previous and the first run, the drift, and control limits from the first run's noise floor (docs/compare.md)."""
        ...


class ViewResource(ResourceClient):
    """A job's trajectory as a page: one trial, or two side by side with the first step where they differ."""
    def view(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, open: bool = False, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5) -> str:
        """Write one self-contained HTML page of a job's trajectory (-j JOB), or of two trials side by side, aligned by step number, the first step where they differ marked and linked from the top (-j A -j B; or --instance INSTANCE -g BASE -g CAND: the trial that stands for each group on that instance). --output text prints a readable step listing instead (for a terminal)."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, open: bool = False, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5) -> str:
        """Write one self-contained HTML page of a job's trajectory (-j JOB), or of two trials side by side, aligned by step number, the first step where they differ marked and linked from the top (-j A -j B; or --instance INSTANCE -g BASE -g CAND: the trial that stands for each group on that instance). --output text prints a readable step listing instead (for a terminal)."""
        ...


class DivergenceResource(ResourceClient):
    """Where two trials first differ, as data: the step and the differing arguments with both values."""
    def divergence(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, instance_id: str | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5) -> list[TrialDifference]:
        """Print where two trials first differ, as bl view marks it: each trial's outcome, the step, each differing argument with both values (-j A -j B, or --instance INSTANCE -g BASE -g CAND). With --instance, each group's trial is the one that stands for it there. One compact element: for an agent, one call instead of two trajectories."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, instance_id: str | None = None, metric: str = "metrics[?type=='eval'].data.task_score | [0]", pass_threshold: float = 0.5) -> list[TrialDifference]:
        """Print where two trials first differ, as bl view marks it: each trial's outcome, the step, each differing argument with both values (-j A -j B, or --instance INSTANCE -g BASE -g CAND). With --instance, each group's trial is the one that stands for it there. One compact element: for an agent, one call instead of two trajectories."""
        ...


class TasksResource(ResourceClient):
    """Evaluation task lists of groups."""
    def get(self, *, group: str | Sequence[str] | None = None, page: int = 1, page_size: int = 50, all: bool = False, search: str | None = None, status: Literal['passed', 'failed', 'error', 'pending'] | None = None) -> list[TasksGetGroup]:
        """Print one page (or with --all every page) of each group's tasks."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, page_size: int = 1000, search: str | None = None, status: Literal['passed', 'failed', 'error', 'pending'] | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write every task of each group to <group>/task_list.json."""
        ...
    def iter(self, *, group: str | Sequence[str] | None = None, page_size: int = 50, search: str | None = None, status: Literal['passed', 'failed', 'error', 'pending'] | None = None) -> Iterator[Task]:
        """Every item (tasks) of every page that `bl tasks get` walks, one page at a time."""
        ...


class ReportResource(ResourceClient):
    """Pre-analysis reports (markdown) of jobs and groups."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None) -> list[JobReport | GroupReport]:
        """Print the raw report responses as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write report markdown; a group writes its summary and every job's report."""
        ...
    def trigger(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, include_passed: bool = False) -> list[ReportTrigger]:
        """Ask the backend to (re)build reports; prints the raw responses."""
        ...


class TrajectoryResource(ResourceClient):
    """Trajectories of jobs, of whole groups (server-side export) and of download tasks."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, download_timeout: int = 1800) -> list[JobTrajectory | GroupTrajectories]:
        """Print trajectories as a JSON array, one element per id."""
        ...
    def steps(self, *, job: str | Sequence[str] | None = None) -> list[TrajectorySteps]:
        """Print each job's steps compactly, one row per step: its number, role, tool, tokens, the first line of its content and the names of its other fields (bl view shows them whole); --output table for a terminal."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, download_timeout: int = 1800, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
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
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: Literal[True], allow_size_mismatch: bool = False, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> list[ArtifactEntry]: ...
    @overload
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: Literal[False] = False, allow_size_mismatch: bool = False, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult: ...
    @overload
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, task_id: str | Sequence[str] | None = None, include: str | None = None, exclude: str | None = None, list_only: bool = False, allow_size_mismatch: bool = False, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> list[ArtifactEntry] | DownloadResult:
        """Download artifacts through the backend proxy; --list-only prints the listing instead."""
        ...


class PullResource(ResourceClient):
    """Download several resources of groups or jobs in one go (sections run concurrently)."""
    def pull(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, sections: str | Sequence[str] | None = None, download_timeout: int = 1800, allow_size_mismatch: bool = False, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False, sync: bool = False, until_done: bool = False, interval: float = 5.0, timeout: float | None = None) -> DownloadResult:
        """Run the download commands of the chosen sections for each id; files land where those commands put them."""
        ...
    def __call__(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, sections: str | Sequence[str] | None = None, download_timeout: int = 1800, allow_size_mismatch: bool = False, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False, sync: bool = False, until_done: bool = False, interval: float = 5.0, timeout: float | None = None) -> DownloadResult:
        """Run the download commands of the chosen sections for each id; files land where those commands put them."""
        ...


class RsiResource(ResourceClient):
    """RSI analyses (markdown) of jobs and groups; status is not_created, creating or created."""
    def get(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None) -> list[Rsi]:
        """Print the raw RSI responses as a JSON array, one element per id."""
        ...
    def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, status: Literal['succeeded', 'failed', 'running', 'cancelled'] | None = None, template: str | None = None, instance_id: str | None = None, output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:
        """Write RSI markdown; a group writes its summary and every job's analysis."""
        ...
    def trigger(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, include_passed: bool = False) -> list[RsiTrigger]:
        """Ask the backend to create RSI analyses; prints the raw responses."""
        ...


class BrmResource(ResourceClient):
    """Behaviour analyses (BRM) of groups."""
    def run(self, *, group: str | Sequence[str] | None = None, steps: int | Sequence[int] | None = None, sample_size: int = 512, scoring_limit: int = 32) -> list[BehaviorRun]:
        """Start a behaviour analysis of one group; prints the created task."""
        ...
    def get(self, *, task_id: str | Sequence[str] | None = None, scope: Literal['overall', 'detail', 'status', 'all'] = 'all') -> list[BehaviorAll | BehaviorOverall | BehaviorDetail | BehaviorTask]:
        """Print behaviour analyses (overall scores, detail patterns, status, or all) of task uids."""
        ...
    def status(self, *, task_id: str | Sequence[str] | None = None) -> list[BehaviorTask]:
        """Print the status of behaviour analyses (same as get --scope status)."""
        ...
    def list(self, *, group: str | Sequence[str] | None = None) -> list[BehaviorTasksOfGroup]:
        """Print the behaviour analyses of groups."""
        ...
