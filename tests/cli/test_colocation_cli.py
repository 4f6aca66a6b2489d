"""Co-location through `gsg validate` (issue 12 item 4): deployments sharing one GPU start in apply order, each
judged by its engine's start-up check (GSG041) and by the footprints it leaves (GSG035); a lone deployment's
run-time margin stays GSG034."""

from __future__ import annotations

import json

FLEET = """\
clusters:
- name: lab
  workers:
  - name: w0
    gpus:
{gpus}
"""
A6000 = "    - {{index: {i}, name: NVIDIA RTX A6000, memory: {{total: 49140MiB}}}}"


def write_fleet(tmp_path, gpus: int = 1):
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET.format(gpus="\n".join(A6000.format(i=i) for i in range(gpus))))
    return path


def spec(name: str, repo: str, gmu: float, gpu_ids: str = "'w0:cuda:0'",
         extra: str = "--max-model-len=8192, --max-num-seqs=4"):
    return (f"name: {name}\nsource: huggingface\nhuggingface_repo_id: {repo}\n"
            f"gpu_selector: {{gpu_ids: [{gpu_ids}]}}\nbackend: vLLM\nbackend_version: 0.11.0\n"
            f"backend_parameters: [--gpu-memory-utilization={gmu}, {extra}]\n")


def validate(gsg, folder, fleet):
    result = gsg("validate", str(folder), "--fleet", str(fleet), "-o", "json")
    findings = [f for f in json.loads(result.out)["findings"] if f["severity"] != "info"]
    return result.code, findings


def specs_in(tmp_path, name, docs):
    folder = tmp_path / name
    folder.mkdir()
    for i, text in enumerate(docs):  # file order is apply order within a wave
        (folder / f"{i}-spec.yaml").write_text(text)
    return folder


SMALL = [("qwen3-8b", "Qwen/Qwen3-8B"), ("llama-8b", "meta-llama/Llama-3.1-8B"), ("qwen-05b", "Qwen/Qwen2.5-0.5B")]


def test_two_small_models_at_045_on_one_48gb_card_validate(gsg, tmp_path):
    fleet = write_fleet(tmp_path)
    for pair in ((SMALL[0], SMALL[1]), (SMALL[2], SMALL[0]), (SMALL[2], SMALL[2])):
        folder = specs_in(tmp_path, "-".join(n for n, _ in pair) + "-pair",
                          [spec(f"{n}-{i}", repo, 0.45) for i, (n, repo) in enumerate(pair)])
        code, findings = validate(gsg, folder, fleet)
        assert (code, [f["rule_id"] for f in findings]) == (0, []), pair


def test_a_third_at_045_is_refused_at_startup_and_overcommits(gsg, tmp_path):
    folder = specs_in(tmp_path, "three", [spec(n, repo, 0.45) for n, repo in SMALL])
    code, findings = validate(gsg, folder, write_fleet(tmp_path))
    assert code == 1
    # GPUStack's own bookings refuse it too (GSG023/024); gsg adds what would really happen: vLLM's start-up check
    # says no, and the three footprints exceed the card
    assert sorted((f["rule_id"], f["spec"]) for f in findings) == [
        ("GSG023", "qwen-05b"), ("GSG024", "qwen-05b"), ("GSG035", "qwen-05b"), ("GSG041", "qwen-05b")]
    refusal = next(f for f in findings if f["rule_id"] == "GSG041")
    assert refusal["message"].endswith("less than desired GPU memory utilization (0.45, 21.59 GiB)")
    held = json.loads(gsg("validate", str(folder), "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json").out)
    assert held["summary"]["errors"] == 4


def test_the_third_at_a_smaller_fraction_starts(gsg, tmp_path):
    # what the two leave free, less the CUDA context, still holds 0.05 x 47.99 GiB = 2.40 GiB: it starts, and the
    # three footprints fit the card
    docs = [spec(n, repo, 0.45) for n, repo in SMALL[:2]] + [spec("tiny", "Qwen/Qwen2.5-0.5B", 0.05)]
    code, findings = validate(gsg, specs_in(tmp_path, "tiny", docs), write_fleet(tmp_path))
    # 0.45 + 0.45 + 0.05 of the card: GPUStack's bookings admit it, it starts and its footprint fits: no finding
    assert (code, [f["rule_id"] for f in findings]) == (0, [])


def test_field_notes_70b_at_092_draws_headroom_not_a_startup_refusal(gsg, tmp_path):
    ids = ", ".join(f"'w0:cuda:{i}'" for i in range(4))
    hardened = "--tensor-parallel-size=4, --max-model-len=16384, --kv-cache-dtype=fp8, --max-num-seqs=32"
    folder = specs_in(tmp_path, "70b", [spec("llama-70b", "meta-llama/Llama-3.3-70B-Instruct", 0.92, ids, hardened)])
    code, findings = validate(gsg, folder, write_fleet(tmp_path, 4))
    # 32 sequences of 16,384 tokens oversubscribe the pool (GSG033, a warning of its own); the memory verdict is
    # the headroom, not a start-up refusal or an overcommit
    assert sorted(f["rule_id"] for f in findings) == ["GSG033", "GSG034"]
    assert code == 0  # warnings
    folder = specs_in(tmp_path, "70b-088", [spec("llama-70b", "meta-llama/Llama-3.3-70B-Instruct", 0.88, ids,
                                                 hardened)])
    assert [f["rule_id"] for f in validate(gsg, folder, write_fleet(tmp_path, 4))[1]] == ["GSG033"]  # the fix
