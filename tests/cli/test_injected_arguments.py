"""GPUStack's own 2.3 export selecting two GPUs without a TP fits; render shows the worker's arguments;
thousands of parked specs validate quietly."""

import yaml
from support import EXPORT_FIXTURE

FLEET = """format_version: 1
clusters:
  - name: ci-cluster
    workers:
      - name: fake-a6000-1
        gpus:
          - {index: 0, name: NVIDIA RTX A6000, memory: {total: 49140MiB}}
          - {index: 1, name: NVIDIA RTX A6000, memory: {total: 49140MiB}}
      - name: fake-a6000-2
        gpus:
          - {index: 0, name: NVIDIA RTX A6000, memory: {total: 49140MiB}}
"""


def test_export_with_two_gpus_and_no_tp_runs_at_tp_2(gsg, tmp_path):
    (tmp_path / "fleet.yaml").write_text(FLEET)
    result = gsg("validate", str(EXPORT_FIXTURE), "--fleet", str(tmp_path / "fleet.yaml"), "--offline")
    assert "GSG031" not in result.out
    # 32B bf16 split over two A6000s: 11.24 GiB of KV per GPU (at TP 1 it was -19.50 GiB, GSG031)
    assert ("the KV pool holds 184,208 tokens (11.24 GiB per GPU): 11 such sequences fit at once" in result.out)
    assert result.err == "gsg: 0 errors, 1 warning, 1 note in 2 specs (1 file)\n"


def test_render_marks_the_worker_arguments(gsg):
    result = gsg("render", str(EXPORT_FIXTURE), "--offline")
    assert result.code == 0, result.err
    comment = result.out.split("---\n")[1].split("\nname:")[0]
    assert comment.splitlines()[:4] == [
        "# llama-70b-tp2: backend arguments",
        "#   spec: --max-model-len=16384 --gpu-memory-utilization=0.88 --kv-cache-dtype=fp8 --max-num-seqs=32 "
        "--enable-chunked-prefill",
        "#   added by GPUStack's worker (not in this document):",
        "#     --tensor-parallel-size=2  (2 GPUs of one worker and no parallel size; "
        "gpustack/worker/backends/vllm.py get_auto_parallelism_arguments)",
    ]
    documents = list(yaml.safe_load_all(result.out))
    assert "--tensor-parallel-size=2" not in documents[1]["backend_parameters"]  # never sent


def test_many_parked_specs_stay_quiet(gsg, tmp_path):
    (tmp_path / "fleet.yaml").write_text(FLEET)
    specs = tmp_path / "specs"
    specs.mkdir()
    body = "".join(f"---\nname: parked-{i}\ncluster_name: ci-cluster\nsource: huggingface\n"
                   f"huggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nreplicas: 0\n"
                   f"gpu_selector: {{gpu_ids: [fake-a6000-1:cuda:0]}}\nbackend: vLLM\nbackend_version: 0.11.0\n"
                   "backend_parameters: [--max-model-len=4096]\n" for i in range(5000))
    (specs / "parked.yaml").write_text(body)
    result = gsg("validate", str(specs), "--fleet", str(tmp_path / "fleet.yaml"), "--offline")
    assert result.code == 0, result.out[-2000:]
    assert result.out == ""
    assert result.err == "gsg: 0 errors, 0 warnings, 0 notes in 5000 specs (1 file)\n"


def test_render_passes_several_values_on_as_separate_items(gsg, tmp_path):
    """vLLM's --lora-modules takes several values (nargs='+'): sent as the spec lists them, shown apart in the
    comment, never as `--lora-modules=a b` (one value to the engine)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: a\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\nbackend: vLLM\n"
                    "backend_version: 0.11.0\nbackend_parameters: [--enable-lora, --lora-modules, sql=org/sql-lora, "
                    "chat=org/chat-lora]\n")
    result = gsg("render", str(spec), "--offline")
    assert result.code == 0, result.err
    assert result.out.splitlines()[1] == "#   spec: --enable-lora --lora-modules sql=org/sql-lora chat=org/chat-lora"
    assert yaml.safe_load("name:" + result.out.split("\nname:", 1)[1])["backend_parameters"] == [
        "--enable-lora", "--lora-modules", "sql=org/sql-lora", "chat=org/chat-lora"]
