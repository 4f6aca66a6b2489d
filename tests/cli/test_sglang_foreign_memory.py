"""SGLang beside memory other processes hold (a display, a monitoring agent): it takes its fraction of what it finds
free, so alone on a GPU it starts and cannot overcommit it; whether what it leaves holds its own reserve is the
headroom rule's warning (GSG034), which counts that memory. Before, 300 MiB of foreign use made SGLang's own default
fraction two errors (GSG035 gpu-overcommit and GSG041 startup-free-memory)."""

from __future__ import annotations

import json

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.colocation import OOM, STARTS, startup_sequence
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.units import GiB, MiB

H100 = 81_559 * MiB
FLEET = """\
clusters:
- name: lab
  workers:
  - name: h
    gpus:
    - {{index: 0, name: NVIDIA H100 80GB HBM3, memory: {{total: 81559MiB{used}}}}}
"""


def spec(name: str, fraction: str = "", gpu: str = "h:cuda:0") -> str:
    args = f"backend_parameters: [--quantization=fp8{', --mem-fraction-static=' + fraction if fraction else ''}]\n"
    return (f"name: {name}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen3-30B-A3B\n"
            f"gpu_selector: {{gpu_ids: ['{gpu}']}}\nbackend: SGLang\nbackend_version: 0.5.23\n" + args)


def validate(gsg, tmp_path, used: str, *docs: str):
    folder = tmp_path / "specs"
    folder.mkdir()
    for i, text in enumerate(docs):
        (folder / f"{i}.yaml").write_text(text)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(used=f", used: {used}" if used else ""))
    result = gsg("validate", str(folder), "--fleet", str(fleet), "--offline", "-o", "json")
    findings = [f for f in json.loads(result.out)["findings"] if f["severity"] != "info"]
    return result.code, findings


def test_default_fraction_beside_300_mib_is_a_headroom_warning_not_two_errors(gsg, tmp_path):
    code, findings = validate(gsg, tmp_path, "300MiB", spec("qwen"))
    assert code == 0
    assert [(f["rule_id"], f["severity"]) for f in findings] == [("GSG034", "warning")]
    # the 300 MiB (0.29 GiB) are named and kept out of what the fraction leaves
    assert findings[0]["message"].startswith(
        "--mem-fraction-static 0.83 leaves 13.91 GiB of 79.65 GiB outside the engine's budget "
        "(beside 0.29 GiB other processes hold), but 13.95 GiB is needed there")


def test_without_foreign_use_the_same_spec_is_clean_and_the_warning_needs_the_foreign_bytes(gsg, tmp_path):
    code, findings = validate(gsg, tmp_path, "", spec("qwen"))
    assert (code, findings) == (0, [])


def test_two_sglang_instances_on_one_gpu_still_overcommit_it(gsg, tmp_path):
    code, findings = validate(gsg, tmp_path, "300MiB", spec("a", "0.45"), spec("b", "0.45"))
    assert code == 1
    assert "GSG035" in [f["rule_id"] for f in findings]


def test_sglang_alone_starts_whatever_foreign_memory_its_fraction_absorbs():
    est = estimate_sglang(catalog_facts("Qwen/Qwen2.5-7B-Instruct"), H100, SglangConfig(foreign_bytes=GiB),
                          version="0.5.23")
    check = startup_sequence(H100, GiB, [("a", est)])[0]
    assert check.outcome == STARTS
    assert check.holds == H100 - GiB  # it takes its reserve where it is free: nothing is left for another
    # what start-up itself needs is the static part and the graphs it captures, not the activation margin
    x = est.extra
    assert check.needs_free == est.non_torch + est.requested + est.cuda_graphs + x["prefill_graph_reserve"]


def test_sglang_ooms_at_start_up_where_its_graphs_do_not_fit_beside_the_static_part():
    # at 0.99 of what is free, 1 % of 79 GiB is left: less than the graphs it captures (decode and prefill)
    est = estimate_sglang(catalog_facts("Qwen/Qwen2.5-7B-Instruct"), H100, SglangConfig(mem_fraction_static=0.99),
                          version="0.5.23")
    graphs = est.cuda_graphs + est.extra["prefill_graph_reserve"]
    left = H100 - est.non_torch - est.requested
    assert est.extra["prefill_graph_reserve"] > 0 and left < graphs
    check = startup_sequence(H100, 0, [("a", est)])[0]
    assert (check.outcome, check.holds, check.needs_free) == (OOM, 0, H100 - left + graphs)
    assert check.reason.startswith("fraction of the free memory, then ")
    # at 0.95 the same graphs fit: it starts
    roomy = estimate_sglang(catalog_facts("Qwen/Qwen2.5-7B-Instruct"), H100, SglangConfig(mem_fraction_static=0.95),
                            version="0.5.23")
    assert startup_sequence(H100, 0, [("a", roomy)])[0].outcome == STARTS


def vllm_spec(version: str) -> str:
    return ("name: v\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen3-8B\n"
            f"gpu_selector: {{gpu_ids: ['h:cuda:0']}}\nbackend: vLLM\nbackend_version: {version}\n"
            "backend_parameters: [--gpu-memory-utilization=0.97, --max-model-len=8192]\n")


def test_vllm_034_sizes_its_extensible_pool_from_what_is_free_so_alone_it_cannot_overcommit(gsg, tmp_path):
    # 0.34's gmu is only a cap: 3,000 MiB held elsewhere shrink the pool (was GSG035: 80.24 GiB on 79.65)
    code, findings = validate(gsg, tmp_path, "3000MiB", vllm_spec("0.34.0"))
    assert code == 0 and "GSG035" not in [f["rule_id"] for f in findings]


def test_vllm_011_takes_gmu_x_total_whatever_is_held_so_it_still_overcommits(gsg, tmp_path):
    code, findings = validate(gsg, tmp_path, "3000MiB", vllm_spec("0.11.0"))
    assert code == 1 and "GSG035" in [f["rule_id"] for f in findings]
