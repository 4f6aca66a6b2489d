"""A gpu id listed twice in gpu_selector.gpu_ids (round 21). GPUStack keeps repeats (its parse_gpu_ids_by_worker
groups and sorts, never dedupes), so gsg used to book the one GPU twice and report the spec as overcommitting
itself (GSG035 + GSG041, 'llama-8b 21.49 GiB, llama-8b 21.49 GiB'). Now it is one GSG002 at the repeat's item."""

from __future__ import annotations

from support import FLEET, REPO

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()


def _spec(tmp_path, ids: str):
    path = tmp_path / "a.yaml"
    path.write_text(SPEC.replace("gpu_ids: [gpu-c:cuda:0, gpu-c:cuda:1]", ids))
    return path


def test_a_repeated_gpu_id_is_one_error_at_the_repeat_not_an_overcommit(gsg, tmp_path):
    path = _spec(tmp_path, "gpu_ids:\n    - gpu-c:cuda:0\n    - gpu-c:cuda:1\n    - gpu-c:cuda:0")
    result = gsg("validate", str(path), "--fleet", str(FLEET), "--offline")
    assert result.code == 1
    assert [line for line in result.out.splitlines() if " error " in line] == [
        f"{path}:12:7: error GSG002 schema [llama-8b]: gpu id 'gpu-c:cuda:0' is listed twice in "
        "gpu_selector.gpu_ids (items 1 and 3); GPUStack keeps both and counts that GPU twice"]
    assert "GSG035" not in result.out and "GSG041" not in result.out


def test_render_refuses_a_repeated_gpu_id_and_writes_nothing(gsg, tmp_path):
    path = _spec(tmp_path, "gpu_ids: [gpu-c:cuda:1, gpu-c:cuda:1]")
    result = gsg("render", str(path), "--offline", "--out", str(tmp_path / "out.yaml"))
    assert result.code == 1
    assert f"{path}:9:27: error GSG002" in result.err and not (tmp_path / "out.yaml").exists()


def test_distinct_ids_of_one_index_on_two_workers_are_not_repeats(gsg, tmp_path):
    path = _spec(tmp_path, "gpu_ids: [gpu-c:cuda:0, gpu-d:cuda:0]")
    result = gsg("validate", str(path), "--fleet", str(FLEET), "--offline")
    assert "listed twice" not in result.out
