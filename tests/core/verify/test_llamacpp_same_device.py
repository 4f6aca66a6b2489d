"""verify compares llama.cpp's buffers device for device: the log's binding device against the estimate's device of
the same index, not against the estimate's fullest device (llama.cpp#12369: five Radeon VII, 13 layers of KV on
ROCm0-3 and 12 on ROCm4, whose output layer makes it the estimate's fullest: -7.7 % before, 0.0 % after)."""

from __future__ import annotations

from types import SimpleNamespace

from support import REPO

from gpustack_guard.commands import verify as V
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import same_device_terms
from gpustack_guard.core.verify.logparse import parse_log

LOGS = REPO / "tests" / "fixtures" / "logs"


def verified(path, model: str, gpu: tuple[str, str], version: str, *args: str, quantization: str | None = None):
    log, _ = parse_log(path.read_text(encoding="utf-8").splitlines(True), P.LLAMACPP)
    opts = V.VerifyOptions(log=str(path), model=model, gpu_memory=gpu[1], gpu_name=gpu[0], backend_version=version,
                           quantization=quantization, backend_args=args)
    rebuilt = V.rebuild(opts, log)
    return log, rebuilt.evaluation.estimate, V.report(opts, log, rebuilt, [])


def test_five_radeon_vii_compare_rocm0s_thirteen_layers_not_the_output_devices_twelve():
    log, est, doc = verified(LOGS / "llama.cpp" / "qwen25-32b-q4km-5x-radeon-vii-rocm-32768-no-fa.log",
                             "Qwen/Qwen2.5-32B", ("AMD Radeon VII", "16368MiB"), "b4880", "--ctx-size=32768",
                             "--n-gpu-layers=100", quantization="q4_k_m")
    per_layer = 32768 * 1024 * 2 * 2  # cells x (8 KV heads x 128) x K and V x f16
    assert doc["binding_rank"] == "ROCm0"
    assert [d["kv"] // per_layer for d in est.extra["per_device"]] == [13, 13, 13, 13, 12]
    assert est.kv_cache == 12 * per_layer  # the estimate's fullest device: the output layer's
    assert doc["estimated"][P.KV_CACHE] == doc["observed"][P.KV_CACHE] == 1664 * MiB


def test_a_second_model_on_three_gpus_compares_the_first_device(tmp_path):
    # Qwen2.5-7B's 28 layers and its output over three equal cards: 29 slots split 10 / 10 / 9, the output layer
    # last; 8 MiB of f16 KV a layer at 4,096 cells (the lines as llama_kv_cache_init prints them at b4500)
    lines = ["llama_kv_cache_init: kv_size = 4096, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 28, "
             "can_shift = 1\n"]
    lines += [f"llama_kv_cache_init:      CUDA{i} KV buffer size =   {kv:.2f} MiB\n" for i, kv in enumerate((80, 80, 64))]
    lines += [f"llama_init_from_model:      CUDA{i} compute buffer size =   300.00 MiB\n" for i in range(3)]
    path = tmp_path / "three.log"
    path.write_text("".join(lines), encoding="utf-8")
    log, est, doc = verified(path, "Qwen/Qwen2.5-7B", ("NVIDIA GeForce RTX 4090", "24564MiB"), "b4500",
                             "--ctx-size=4096", "--n-gpu-layers=99", quantization="q4_k_m")
    assert [d["kv"] // MiB for d in est.extra["per_device"]] == [80, 80, 64]
    assert doc["binding_rank"] == "CUDA0"
    assert doc["estimated"][P.KV_CACHE] == est.extra["per_device"][0]["kv"] == 80 * MiB


def test_devices_the_estimate_does_not_count_one_for_one_leave_the_terms_as_they_were():
    estimated = {P.KV_CACHE: 7, P.WEIGHTS: 8}
    est = SimpleNamespace(extra={"per_device": [{"kv": 1, "weights": 2, "compute": 3}]})
    for text in ("llama_kv_cache:    Vulkan1 KV buffer size =   512.00 MiB\n"
                 "llama_kv_cache:    Vulkan2 KV buffer size =   256.00 MiB\n",  # two devices, one estimated
                 "llama_kv_cache: RPC0[10.0.0.2:50052] KV buffer size =  2304.00 MiB\n"):  # not a backend's index
        log, _ = parse_log(text.splitlines(True), P.LLAMACPP)
        assert same_device_terms(log, est, estimated) == estimated
    log, _ = parse_log(["llama_kv_cache:    Vulkan1 KV buffer size =   512.00 MiB\n"], P.LLAMACPP)
    assert same_device_terms(log, est, estimated) == {P.KV_CACHE: 1, P.WEIGHTS: 2, P.ACTIVATION: 3}
