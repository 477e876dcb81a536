def test_metrics_get_job(api):
    result = api("--no-pretty", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert result.out.startswith('[{"job_id":"G1-J0001","metrics":')
