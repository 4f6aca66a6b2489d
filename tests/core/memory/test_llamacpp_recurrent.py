"""llama.cpp's per-sequence recurrent state (the RS buffer) of Mamba-style and hybrid models read from a GGUF
header: which layers hold recurrent rows or a KV cache, the F32 conv and scan rows by build, and public logs whose
"RS buffer size" and "KV buffer size" lines the arithmetic meets to the printed 0.01 MiB."""

from dataclasses import replace
from pathlib import Path

import gguf
import numpy as np
import pytest

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.engines.llamacpp import LlamaCppConfig, estimate_llamacpp, recurrent_elements
from gpustack_guard.core.memory.estimate import UnsupportedModel
from gpustack_guard.core.memory.gguf import GGUFError, facts_from_gguf, parse_header
from gpustack_guard.core.memory.terms import KV_CACHE, RECURRENT_STATE, budget_terms
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB
from gpustack_guard.core.verify.logparse import parse_log

MiB = 1024 * 1024
LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "llama.cpp"
FIXTURES = {"qwen35-0.8b": LOGS / "qwen35-0.8b-cpu-rs-4-slots.log", "qwen35-4b": LOGS / "qwen35-4b-b8467-rs-one-slot.log",
            "lfm2-1.2b": LOGS / "lfm2-1.2b-cpu-rs-one-slot.log"}


def _facts(tmp_path: Path, arch: str, layers: int, hidden: int, keys: dict, heads=8, kv_heads=2):
    """A header-only GGUF of `arch` (one tiny tensor per block so the blocks have bytes) parsed as gsg parses one."""
    path = tmp_path / f"{arch}.gguf"
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(layers)
    writer.add_context_length(4096)
    writer.add_embedding_length(hidden)
    writer.add_vocab_size(1000)
    if heads is not None:
        writer.add_head_count(heads)
    if kv_heads is not None:
        writer.add_head_count_kv(kv_heads)
    for key, value in keys.items():
        if isinstance(value, list):
            writer.add_array(f"{arch}.{key}", value)
        elif isinstance(value, bool):
            writer.add_bool(f"{arch}.{key}", value)
        else:
            writer.add_uint32(f"{arch}.{key}", value)
    for il in range(layers):
        writer.add_tensor(f"blk.{il}.attn_norm.weight", np.ones(hidden, dtype=np.float32))
    writer.add_tensor("token_embd.weight", np.ones((1000, hidden), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    data = path.read_bytes()
    return facts_from_gguf(parse_header(lambda offset, size: data[offset:offset + size]), str(path))


def _qwen35(tmp_path, layers, hidden, inner, heads, kv_heads):
    # Qwen3.5's converter writes the gated delta net as ssm.*: conv kernel 4, 128-wide keys in 16 groups
    return _facts(tmp_path, "qwen35", layers, hidden, {"ssm.conv_kernel": 4, "ssm.state_size": 128,
                                                       "ssm.group_count": 16, "ssm.time_step_rank": 16,
                                                       "ssm.inner_size": inner, "full_attention_interval": 4,
                                                       "attention.key_length": 256,
                                                       "attention.value_length": 256},
                  heads=heads, kv_heads=kv_heads)


def test_qwen35_every_fourth_layer_attends_and_the_rest_keep_conv_and_scan_rows(tmp_path):
    facts = _qwen35(tmp_path, 24, 1024, 2048, 8, 2)
    state = facts.recurrent_state
    assert state.attention == tuple((il + 1) % 4 == 0 for il in range(24))
    assert state.recurrent == tuple(not a for a in state.attention)
    # (d_conv - 1) x (d_inner + 2 x n_group x d_state), d_state x d_inner
    assert recurrent_elements(facts) == (3 * (2048 + 2 * 16 * 128), 128 * 2048)


# Public llama-server logs (fixtures, the lines quoted in each test):
# - Qwen3.5-0.8B Q4_K_M on CPU, -np auto (4 slots, unified), n_ctx 262144: a llama.cpp build note in a blog
#   (oss.ajohn.top llama.cpp 训练营, ggml cd708db0c): "llama_kv_cache: CPU KV buffer size = 3072.00 MiB",
#   "llama_memory_recurrent: CPU RS buffer size = 77.06 MiB ... R (f32): 5.06 MiB, S (f32): 72.00 MiB"
# - Qwen3.5-4B Q4_K_M at b8467, -c 4096, one slot: "CUDA0 RS buffer size = 50.25 MiB ... R (f32): 2.25 MiB,
#   S (f32): 48.00 MiB"
# - LFM2.5-Audio-1.5B's LFM2 text model (arch lfm2, n_embd 2048, n_head_kv [0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 8, 0,
#   8, 0, 8, 0]) Q4_0 on an Android CPU, -c 4096, one slot: "CPU KV buffer size = 48.00 MiB", "CPU RS buffer size =
#   0.16 MiB ... R (f32): 0.16 MiB, S (f32): 0.00 MiB"
@pytest.mark.parametrize("model,cfg,version,kv_mib,rs_mib", [
    ("qwen35-0.8b", LlamaCppConfig(ctx_size=262144, flash_attn=True), "b8500", "3072.00", "77.06"),
    ("qwen35-4b", LlamaCppConfig(ctx_size=4096, parallel=1, flash_attn=True), "b8467", None, "50.25"),
    ("lfm2-1.2b", LlamaCppConfig(ctx_size=4096, parallel=1, flash_attn=True, kv_unified=False), "b7100", "48.00",
     "0.16"),
])
def test_public_logs_rs_and_kv_buffers(tmp_path, model, cfg, version, kv_mib, rs_mib):
    if model == "qwen35-0.8b":
        facts = _qwen35(tmp_path, 24, 1024, 2048, 8, 2)
    elif model == "qwen35-4b":
        facts = _qwen35(tmp_path, 32, 2560, 4096, 16, 4)
    else:
        facts = _facts(tmp_path, "lfm2", 16, 2048, {"shortconv.l_cache": 3}, heads=32,
                       kv_heads=[0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 8, 0, 8, 0, 8, 0])
    cfg = replace(cfg, gpu_layers=0)  # CPU builds: everything, the state included, stays in host memory
    est = estimate_llamacpp(facts, [16 * GiB], cfg, version=version)
    host = est.extra["host"]
    assert f"{host['recurrent_state'] / MiB:.2f}" == rs_mib
    if kv_mib is not None:
        assert f"{host['kv'] / MiB:.2f}" == kv_mib
    # the same figures as gsg verify reads them from the kept fixture
    log, _ = parse_log(FIXTURES[model].read_text().splitlines(True), "llama.cpp")
    (terms,) = log.ranks.values()
    assert terms[RECURRENT_STATE] == round(float(rs_mib) * MiB)
    if kv_mib is not None:
        assert terms[KV_CACHE] == round(float(kv_mib) * MiB)


def test_lfm2_keeps_a_short_conv_row_and_no_scan_row(tmp_path):
    facts = _facts(tmp_path, "lfm2", 16, 2048, {"shortconv.l_cache": 3}, heads=32,
                   kv_heads=[0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 8, 0, 8, 0, 8, 0])
    assert recurrent_elements(facts) == (2048 * 2, 0)
    assert sum(facts.recurrent_state.recurrent) == 10 and sum(facts.recurrent_state.attention) == 6


def test_offloaded_state_is_its_own_term_on_the_gpu_and_ignores_the_cache_type(tmp_path):
    facts = _qwen35(tmp_path, 32, 2560, 4096, 16, 4)
    base = LlamaCppConfig(ctx_size=4096, parallel=1, flash_attn=True)
    est = estimate_llamacpp(facts, [16 * GiB], base, version="b8467")
    rs = est.extra["recurrent_state"]
    assert rs["bytes_per_gpu"] == 52_690_944  # 50.25 MiB: 24 layers x (24,576 + 524,288 elements) x 4 B x 1
    assert (rs["recurrent_layers"], rs["attention_layers"], rs["sequences"]) == (24, 8, 1)
    # the KV cache covers the 8 attention layers only: 8 x 4,096 cells x 2 x 1,024 x f16
    assert est.kv_cache == 8 * 4096 * 2 * 1024 * 2
    assert est.requested == est.weights + est.kv_cache + rs["bytes_per_gpu"] + est.activation + est.non_torch
    q8 = estimate_llamacpp(facts, [16 * GiB], replace(base, cache_type_k="q8_0", cache_type_v="q8_0"),
                           version="b8467")
    assert q8.extra["recurrent_state"]["bytes_per_gpu"] == rs["bytes_per_gpu"]  # F32 whatever -ctk / -ctv
    assert q8.kv_cache < est.kv_cache
    terms = {t.term: t for t in budget_terms(est)}
    assert terms[RECURRENT_STATE].value == 52_690_944
    assert terms[RECURRENT_STATE].rule == "rs-buffer-f32-rows-per-sequence"


def test_one_row_per_slot(tmp_path):
    facts = _qwen35(tmp_path, 32, 2560, 4096, 16, 4)
    one = estimate_llamacpp(facts, [16 * GiB], LlamaCppConfig(ctx_size=4096, parallel=1), version="b8467")
    auto = estimate_llamacpp(facts, [16 * GiB], LlamaCppConfig(ctx_size=4096), version="b8467")
    assert auto.extra["recurrent_state"]["bytes_per_gpu"] == 4 * one.extra["recurrent_state"]["bytes_per_gpu"]


def test_rules_by_build_and_older_builds_refused(tmp_path):
    facts = _qwen35(tmp_path, 24, 1024, 2048, 8, 2)
    assert P.llamacpp_recurrent_rule("b6000").rule == "f32-conv-and-scan-rows-per-sequence"
    assert P.llamacpp_recurrent_rule("b9000").rule == "rs-buffer-f32-rows-per-sequence"
    with pytest.raises(UnsupportedModel, match="keeps recurrent state in its KV cache"):
        estimate_llamacpp(facts, [16 * GiB], LlamaCppConfig(ctx_size=4096), version="b4500")
    sources = P.TERM_SOURCES["llamacpp"][RECURRENT_STATE]
    assert [(r.since, r.rule, r.source) for r in sources] == \
        [(r.since, r.rule, r.source) for r in P.LLAMACPP_RECURRENT_RULES]


def test_mamba_has_no_attention_and_no_kv(tmp_path):
    # Mamba's converter writes head_count 0; d_inner 2 x d_model; conv 4; state 16; no groups (Mamba 1)
    # and feed_forward_length 0, both "unused"
    facts = _facts(tmp_path, "mamba", 4, 256, {"ssm.conv_kernel": 4, "ssm.inner_size": 512, "ssm.state_size": 16,
                                               "ssm.time_step_rank": 16, "feed_forward_length": 0},
                   heads=0, kv_heads=None)
    assert facts.num_attention_heads is None and facts.intermediate_size is None
    est = estimate("llamacpp", facts, [(16 * GiB, "NVIDIA L4")], {"ctx-size": "4096", "parallel": "2"}, "b8467",
                   Policy())
    assert est.kv_cache == 0 and est.kv_bytes_per_token == 0
    assert est.extra["recurrent_state"]["bytes_per_gpu"] == 4 * (3 * 512 + 16 * 512) * 4 * 2
    # other engines have no arithmetic for it: the refusal stays
    with pytest.raises(UnsupportedModel, match="recurrent"):
        estimate("vllm", facts, [(16 * GiB, "NVIDIA L4")], {}, "0.11.0", Policy())


def test_nemotron_h_mlp_layers_hold_neither(tmp_path):
    facts = _facts(tmp_path, "nemotron_h", 4, 256, {"ssm.conv_kernel": 4, "ssm.inner_size": 512,
                                                    "ssm.state_size": 128, "ssm.group_count": 8,
                                                    "ssm.time_step_rank": 8,
                                                    "feed_forward_length": [0, 1024, 0, 1024]},
                   kv_heads=[0, 0, 2, 0])
    assert facts.recurrent_state.recurrent == (True, False, False, False)
    assert facts.recurrent_state.attention == (False, False, True, False)


def test_unread_recurrent_architectures_keep_the_refusal_and_bad_widths_are_one_error(tmp_path):
    rwkv = _facts(tmp_path, "rwkv7", 2, 256, {"wkv.head_size": 64})
    assert rwkv.recurrent_state is None and "has not read" in rwkv.recurrent_layers
    with pytest.raises(GGUFError, match="no jamba.ssm.conv_kernel"):
        _facts(tmp_path, "jamba", 2, 256, {"ssm.inner_size": 512, "ssm.state_size": 16})


def test_partial_offload_splits_the_rows_by_the_device_of_each_layer(tmp_path):
    # A public log-parsing spec (search-index file 60828878331) quotes a 40-layer, one-slot run split as "CPU RS
    # buffer size = 16.75 MiB" and "CUDA0 RS buffer size = 46.06 MiB", R 2.81 / S 60.00 MiB. The model is not
    # named; Qwen3.5-35B-A3B's shapes (30 gated-delta-net layers, d_inner 4,096) give exactly those R and S. Its
    # load lines say "offloading output layer to GPU", "offloading 30 repeating layers", "offloaded 31/41": -ngl 31
    # with the output layer first (profiles.LLAMACPP_OUTPUT_FIRST_SINCE) keeps layers 0-9 (8 of them recurrent) on
    # the CPU. llama_memory_recurrent puts each layer's rows on that layer's device (model.dev_layer).
    facts = _qwen35(tmp_path, 40, 2048, 4096, 16, 2)
    est = estimate_llamacpp(facts, [24 * GiB], LlamaCppConfig(ctx_size=4096, parallel=1, gpu_layers=31),
                            version="b8500")
    assert f"{est.extra['host']['recurrent_state'] / MiB:.2f}" == "16.75"
    assert f"{est.extra['recurrent_state']['bytes_per_gpu'] / MiB:.2f}" == "46.06"
    no_offload = estimate_llamacpp(facts, [24 * GiB], LlamaCppConfig(ctx_size=4096, parallel=1, no_kv_offload=True),
                                   version="b8500")
    assert no_offload.extra["recurrent_state"]["bytes_per_gpu"] == 0  # -nkvo: every row in host memory
    assert f"{no_offload.extra['host']['recurrent_state'] / MiB:.2f}" == "62.81"


def test_fit_partial_offload_of_qwen35_9b_on_four_slots_meets_the_b9849_log(tmp_path):
    # A public hardware-trial report (search-index file 67530874114): b9849's Vulkan llama-server, Qwen3.5-9B on a
    # GTX 1070 Ti at -c 8192, -np auto (4 slots, one unified cache); --fit settled on 31 of 33 layers, so layers 0
    # and 1 (both gated delta net layers) keep their rows on the CPU. Qwen3.5-9B: 32 layers, a full-attention layer
    # every fourth, 4 KV heads of 256, d_inner 4,096 in 16 key groups of 128.
    facts = _qwen35(tmp_path, 32, 4096, 4096, 16, 4)
    est = estimate_llamacpp(facts, [8 * GiB], LlamaCppConfig(ctx_size=8192, gpu_layers=31, flash_attn_auto=True,
                                                             flash_attn=True), version="b9849")
    (gpu,) = est.extra["per_device"]
    assert f"{gpu['kv'] / MiB:.2f}" == "256.00"  # every attention layer (3, 7, ..., 31) is on the GPU
    assert f"{gpu['recurrent_state'] / MiB:.2f}" == "184.25"
    assert f"{est.extra['host']['recurrent_state'] / MiB:.2f}" == "16.75"
    assert est.extra["host"]["kv"] == 0
    log, _ = parse_log((LOGS / "qwen35-9b-vulkan-gtx1070ti-b9849-fit-31-of-33.log").read_text().splitlines(True),
                       "llama.cpp")
    assert log.ranks["Vulkan0"][KV_CACHE] == gpu["kv"]
    assert log.ranks["Vulkan0"][RECURRENT_STATE] == round(184.25 * MiB)
    assert log.ranks["CPU"][RECURRENT_STATE] == round(16.75 * MiB)


@pytest.mark.parametrize("log_name,layers,slots,rows", [
    # 18 of 33 with -np auto (4 slots): the output layer and blocks 15-31 on Vulkan1, 12 of the 24 gated delta net
    # layers on each side at 8.375 MiB a layer for 4 sequences
    ("qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-18-of-33.log", 18, 4, ("100.50", "100.50")),
    # 20 of 33 with -np 1: blocks 13-31 on Vulkan1, 14 gated delta net layers there and 10 on the CPU, 2.09 MiB each
    ("qwen35-9b-vulkan-rtx3060-laptop-b9849-fit-20-of-33-one-slot.log", 20, 1, ("29.31", "20.94")),
])
def test_fit_keeping_part_of_qwen35_9b_on_a_6_gb_laptop_card_meets_the_b9849_logs(tmp_path, log_name, layers, slots,
                                                                                   rows):
    # The same report's RTX 3060 Laptop legs (search-index files 67608857635 and 67369886488). Of the eight attention
    # layers (3, 7, ..., 31) 15, 19, 23, 27 and 31 are on Vulkan1 either way (5 x 32 MiB), 3, 7 and 11 on the CPU.
    facts = _qwen35(tmp_path, 32, 4096, 4096, 16, 4)
    est = estimate_llamacpp(facts, [6 * GiB], LlamaCppConfig(ctx_size=8192, gpu_layers=layers, parallel=slots,
                                                             flash_attn_auto=True, flash_attn=True), version="b9849")
    (gpu,) = est.extra["per_device"]
    assert (f"{gpu['kv'] / MiB:.2f}", f"{est.extra['host']['kv'] / MiB:.2f}") == ("160.00", "96.00")
    assert (f"{gpu['recurrent_state'] / MiB:.2f}", f"{est.extra['host']['recurrent_state'] / MiB:.2f}") == rows
    log, _ = parse_log((LOGS / log_name).read_text().splitlines(True), "llama.cpp")
    assert log.ranks["Vulkan1"][KV_CACHE] == gpu["kv"]
    assert log.ranks["CPU"][KV_CACHE] == est.extra["host"]["kv"]
    assert log.ranks["Vulkan1"][RECURRENT_STATE] == round(float(rows[0]) * MiB)
    assert log.ranks["CPU"][RECURRENT_STATE] == round(float(rows[1]) * MiB)


def test_user_set_partial_offload_of_qwen35_27b_at_131072_cells_meets_the_b8586_log(tmp_path):
    # A public session transcript (search-index file 58671331675): b8586's llama-server, Qwen3.5-27B Q4_K_S with
    # -ngl 26 -c 131072 -np 1 on an RTX 4070. The output layer and blocks 39-63 go to CUDA0, so 7 of the 16
    # attention layers (39, 43, ..., 63) keep 512 MiB of f16 KV each there and 9 on the CPU; 18 of the 48 gated
    # delta net layers keep their rows on CUDA0 and 30 on the CPU, 3,268,608 B each (R 3 x 10,240 + S 128 x 6,144
    # elements, f32). Qwen3.5-27B: 64 layers, 4 KV heads of 256, d_inner 6,144 in 16 key groups of 128.
    facts = _qwen35(tmp_path, 64, 5120, 6144, 24, 4)
    est = estimate_llamacpp(facts, [11866 * MiB], LlamaCppConfig(ctx_size=131072, parallel=1, gpu_layers=26,
                                                                 flash_attn_auto=True, flash_attn=True),
                            version="b8586")
    (gpu,) = est.extra["per_device"]
    assert f"{gpu['kv'] / MiB:.2f}" == "3584.00"
    assert f"{est.extra['host']['kv'] / MiB:.2f}" == "4608.00"
    assert f"{gpu['recurrent_state'] / MiB:.2f}" == "56.11"
    assert f"{est.extra['host']['recurrent_state'] / MiB:.2f}" == "93.52"
    log, _ = parse_log((LOGS / "qwen35-27b-b8586-rtx4070-26-of-65-compute-oom.log").read_text().splitlines(True),
                       "llama.cpp")
    assert log.ranks["CUDA0"][KV_CACHE] == gpu["kv"]
    assert log.ranks["CPU"][KV_CACHE] == est.extra["host"]["kv"]
    assert log.ranks["CUDA0"][RECURRENT_STATE] == round(56.11 * MiB)
    assert log.ranks["CPU"][RECURRENT_STATE] == round(93.52 * MiB)


@pytest.mark.parametrize("version", ["b8100", "b9849"])
def test_the_logs_output_first_order_places_the_rows_whatever_the_build(tmp_path, version):
    # The b9849 log above prints "offloading output layer to GPU" before "offloading 30 repeating layers": verify
    # reads that order as the output-first placement (compare.output_layer_env), so an older build given with the
    # log (b8100, which gsg counts as output-last) still keeps layers 0 and 1 on the CPU, as the log's buffers say.
    # Without the log's order b8100 keeps only layer 0 there: 192.62 / 8.38 MiB.
    from gpustack_guard.core import args as A
    from gpustack_guard.core.verify import compare as C

    facts = _qwen35(tmp_path, 32, 4096, 4096, 16, 4)
    log, _ = parse_log((LOGS / "qwen35-9b-vulkan-gtx1070ti-b9849-fit-31-of-33.log").read_text().splitlines(True),
                       "llama.cpp")
    env = C.deployment_env(log, {}, version)
    assert env == {P.LLAMACPP_OUTPUT_LAYER_ENV: "first"}
    flags = A.as_dict(A.parse(["--ctx-size=8192", "--n-gpu-layers=31", "--parallel=4", "--kv-unified",
                               "--flash-attn=on"], "llamacpp"), "llamacpp")

    def rows(env: dict) -> tuple[str, str]:
        est = estimate("llamacpp", facts, [(8 * GiB, "")], flags, version, Policy(), env=env)
        return (f"{est.extra['per_device'][0]['recurrent_state'] / MiB:.2f}",
                f"{est.extra['host']['recurrent_state'] / MiB:.2f}")

    assert rows(env) == ("184.25", "16.75")
    assert log.ranks["Vulkan0"][RECURRENT_STATE] == round(184.25 * MiB)
    assert rows({}) == (("192.62", "8.38") if version == "b8100" else ("184.25", "16.75"))
    assert rows({P.LLAMACPP_OUTPUT_LAYER_ENV: "last"}) == ("192.62", "8.38")


@pytest.mark.parametrize("version,rs_mib", [("b9518", "598.50"), ("b9400", "610.97")])
def test_qwen36_mtp_head_holds_no_rows_in_the_targets_caches_from_b9518(tmp_path, version, rs_mib):
    # A public Qwen3.6-27B-MTP run (search-index file 56678392724): 65 blocks, the last one the MTP head
    # (nextn_predict_layers 1), 4 slots, q8_0 K and V, 131,072 cells on an RTX 5090. The target's memory keeps 16
    # attention layers (4,352 MiB) and 48 gated delta net layers (598.50 MiB); the MTP draft context's own KV
    # (272 MiB) follows the draft line and is not the target's. Before b9518 the head block counts as a 49th row.
    facts = _facts(tmp_path, "qwen35", 65, 5120, {"ssm.conv_kernel": 4, "ssm.state_size": 128,
                                                  "ssm.group_count": 16, "ssm.time_step_rank": 48,
                                                  "ssm.inner_size": 6144, "full_attention_interval": 4,
                                                  "attention.key_length": 256, "attention.value_length": 256,
                                                  "nextn_predict_layers": 1}, heads=24, kv_heads=4)
    cfg = LlamaCppConfig(ctx_size=131072, parallel=4, gpu_layers=999, flash_attn=True, cache_type_k="q8_0",
                         cache_type_v="q8_0")
    (gpu,) = estimate_llamacpp(facts, [32606 * MiB], cfg, version=version).extra["per_device"]
    assert f"{gpu['kv'] / MiB:.2f}" == "4352.00"
    assert f"{gpu['recurrent_state'] / MiB:.2f}" == rs_mib
    log, _ = parse_log((LOGS / "qwen36-27b-mtp-mmproj-rtx5090-q8kv-4-slots.log").read_text().splitlines(True),
                       "llama.cpp")
    assert (log.ranks["CUDA0"][KV_CACHE], log.ranks["CUDA0"][RECURRENT_STATE]) == (4352 * MiB, round(598.50 * MiB))


def test_a_nextn_count_as_large_as_the_model_is_one_error(tmp_path):
    with pytest.raises(GGUFError, match="nextn_predict_layers 4 must be below its 4 blocks"):
        _facts(tmp_path, "qwen35", 4, 64, {"ssm.conv_kernel": 4, "ssm.state_size": 16, "ssm.group_count": 1,
                                           "ssm.inner_size": 64, "nextn_predict_layers": 4})
