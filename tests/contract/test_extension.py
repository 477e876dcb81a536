"""The YAML-only extension example of docs/adding-an-endpoint.md, executed.

The YAML blocks are read out of the guide itself (between its
``<!-- example:NAME:start/end -->`` markers), appended to a copy of the table in
a temporary spec directory, and the new commands are run against the session
sandbox.  If the guide's example stops working, this test fails, so the guide
cannot rot.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from support import ROOT, tree

from benchloop.cli import commands
from benchloop.table import load as specload
from benchloop.table.load import SpecError, load_spec

GUIDE = ROOT / "docs" / "adding-an-endpoint.md"
ORIGINAL = load_spec()


def example(name: str, fence: str = "yaml") -> str:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example:{name}:start -->\s*```{fence}\n(.*?)```\s*<!-- example:{name}:end -->",
                      text, re.S)
    assert found, f"no example:{name} block in {GUIDE.name}"
    return found.group(1)


def make_spec_dir(root: Path, *blocks: str, replace: tuple[str, str] | None = None) -> Path:
    spec_dir = root / "spec"
    spec_dir.mkdir()
    source = ROOT / "spec"
    shutil.copy(source / "benchloop.schema.json", spec_dir / "benchloop.schema.json")
    text = (source / "benchloop.yaml").read_text(encoding="utf-8")
    last_section = re.findall(r"^([a-z_]+):", text, re.M)[-1]
    assert last_section == "resources", "the guide says resources: is the last section of the table"
    text = text.rstrip("\n") + "\n" + "".join(blocks)
    if replace:
        assert replace[0] in text
        text = text.replace(*replace)
    (spec_dir / "benchloop.yaml").write_text(text, encoding="utf-8")
    return spec_dir


@pytest.fixture
def use_spec(tmp_path, monkeypatch):
    """Point bl at a table made of the original plus the given blocks."""

    def install(*blocks: str, replace: tuple[str, str] | None = None) -> Path:
        spec_dir = make_spec_dir(tmp_path, *blocks, replace=replace)
        monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(spec_dir))
        monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setattr(specload, "_MEMO", {})
        return spec_dir

    yield install
    # commands.py caches built resources as module attributes; drop the example's.
    vars(commands).pop("res__job_meta", None)


def test_the_endpoint_block_is_the_tables_entry():
    assert yaml.safe_load(example("endpoint")) == {"job_meta": ORIGINAL["endpoints"]["job_meta"]}
    assert "job-meta" not in ORIGINAL["resources"]


def test_get_prints_the_metadata(use_spec, api, backend):
    use_spec(example("resource"))
    assert "job-meta" in load_spec()["resources"]
    result = api("job-meta", "get", "-j", "G1-J0001,G2-J0003")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [backend("/openapi/jobs/G1-J0001/meta"),
                                      backend("/openapi/jobs/G2-J0003/meta")]
    query = api("job-meta", "get", "-j", "G1-J0001", "--query", "[0].job_id")
    assert query.code == 0, query.err
    assert json.loads(query.out) == "G1-J0001"


def test_download_writes_one_file_per_job(use_spec, api, backend, tmp_path):
    use_spec(example("resource"))
    out = tmp_path / "out"
    result = api("job-meta", "download", "-j", "G1-J0001,G1-J0002", "-o", str(out))
    assert result.code == 0, result.err
    files = tree(out)
    assert sorted(files) == ["G1-J0001_meta.json", "G1-J0002_meta.json"]
    assert json.loads(files["G1-J0001_meta.json"]) == backend("/openapi/jobs/G1-J0001/meta")
    assert files["G1-J0001_meta.json"].endswith("}\n")
    again = api("job-meta", "download", "-j", "G1-J0001", "-o", str(out), "--skip-existing")
    assert again.code == 0 and "skip existing" in again.err


def test_unknown_job_and_unsupported_dimension(use_spec, api):
    use_spec(example("resource"))
    missing = api("job-meta", "get", "-j", "G1-J0001,NOPE")
    assert missing.code == 1
    assert len(json.loads(missing.out)) == 1
    assert "NOPE" in missing.err
    group = api("job-meta", "get", "-g", "G1")
    assert group.code == 2
    assert "Error: job-meta takes job ids (-j/--job), not -g/--group" in group.err  # reworded on purpose


def test_group_dimension_fans_out_over_the_jobs(use_spec, api, backend, tmp_path):
    use_spec(example("resource"), example("group"))
    out = tmp_path / "out"
    result = api("job-meta", "download", "-g", "G1", "-o", str(out))
    assert result.code == 0, result.err
    files = tree(out)
    assert len(files) == backend("/openapi/groups/G1/job-ids")["total"] == 40
    assert all(re.fullmatch(r"G1/G1-J\d{4}_meta\.json", name) for name in files)


def test_lint_error_quoted_by_the_guide(use_spec):
    use_spec(example("resource"), replace=('file: "{job}_meta.json"', 'file: "{group}_meta.json"'))
    quoted = re.search(r"```text\n(.*?)\n```", GUIDE.read_text(encoding="utf-8"), re.S).group(1)
    with pytest.raises(SpecError) as caught:
        load_spec()
    assert quoted in str(caught.value)


def test_the_new_resource_shows_up_everywhere(use_spec, bl):
    use_spec(example("resource"))
    help_text = bl("job-meta", "--help")
    assert help_text.code == 0 and "get" in help_text.out and "download" in help_text.out
    described = json.loads(bl("describe", "job-meta").out)
    download = described["resources"]["job-meta"]["actions"]["download"]
    assert download["dimensions"]["job"]["outputs"] == [
        {"part": "meta", "kind": "file", "path": "{job}_meta.json", "format": "json"}]
    openapi = json.loads(bl("describe", "--openapi").out)
    assert "bl job-meta get" in openapi["paths"]["/openapi/jobs/{job}/meta"]["get"]["x-benchloop-commands"]
    assert "job-meta" in bl("completion", "bash").out
    from codegen.docs import render

    assert any(path.name == "job-meta.md" for path in render())


def test_the_python_client_gets_the_new_resource(use_spec, sandbox, backend, tmp_path):
    """The YAML-only change is also a new SDK resource with typed stubs: no Python written."""
    use_spec(example("resource"), example("group"))
    import benchloop
    from codegen import stubs

    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        assert "job_meta" in bl.resources
        assert bl.job_meta.get(job=["G1-J0001", "G2-J0003"]) == [backend("/openapi/jobs/G1-J0001/meta"),
                                                                   backend("/openapi/jobs/G2-J0003/meta")]
        result = bl.job_meta.download(group="G1", output_dir=tmp_path / "out")
        assert len(result.paths) == 40 and result.failures == []
        assert sorted(result.paths) == sorted(str(tmp_path / "out" / name) for name in tree(tmp_path / "out"))
        # the method offers only the ids its action takes: a TypeError as for any Python call
        with pytest.raises(TypeError, match=r"job_meta\.get\(\) got an unexpected keyword argument 'group' "
                                            r"\(takes job"):
            bl.job_meta.get(group="G1")
        with pytest.raises(benchloop.PartialFailure) as caught:
            bl.job_meta.get(job="G1-J0001,NOPE")
        assert [ident for ident, _ in caught.value.failures] == ["NOPE"]
    stub = stubs.stub()
    assert "    job_meta: JobMetaResource\n" in stub
    assert "class JobMetaResource(ResourceClient):" in stub
    assert "def download(self, *, group: str | Sequence[str] | None = None, job: str | Sequence[str] | None = None, " \
           "output_dir: str | os.PathLike[str] | None = None, skip_existing: bool = False) -> DownloadResult:" in stub
    assert "bl.job_meta.get()" in stubs.reference()
