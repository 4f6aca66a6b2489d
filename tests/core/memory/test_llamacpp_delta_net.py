"""The Gated DeltaNet stage of llama.cpp's compute buffer (profiles.LLAMACPP_DELTA_NET_FORMS) against what the real
llama-server of llama-cpp-python 0.3.36 (llama.cpp 0c1e57098, CPU build) printed for tiny qwen35 GGUFs.

The numbers below were measured once (tests/integration/tiny_gguf.py's TinyQwen35 with the shape changes given,
llama-server -c C -ub T -np N -v, the "CPU compute buffer size is X MiB" line its destructor prints at %.4f) and
are kept as data: the unit tests need no binary. tests/integration/test_real_llamacpp_delta_net.py re-measures a
few of them where the binary is built."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from integration.tiny_gguf import TinyQwen35, write_tiny_qwen35_gguf

from gpustack_guard.adapters.model_sources.resolver import read_local_gguf
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.engines.llamacpp import (
    LlamaCppConfig,
    compute_buffer,
    delta_net_scratch,
    estimate_llamacpp,
    ffn_scratch,
    output_logits,
)
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.gguf import RecurrentState
from gpustack_guard.core.memory.terms import COMPUTE_BUFFER
from gpustack_guard.core.units import GiB, MiB

BUILD = "b10507"  # the CI build is dated after it (tests/integration/llamacpp_build.py)
F32 = 4
# What the CPU graph holds beside gsg's count in every layer stage, the feed-forward one included: one more
# hidden row and 9 values per token (gsg's two hidden rows are counted from CUDA logs, profiles.
# LLAMACPP_FFN_HIDDEN_ROWS). The same in all 39 runs below, whichever stage peaks; a test constant, not gsg's.
CPU_EXTRA_HIDDEN_ROWS, CPU_EXTRA_VALUES = 1, 9
PRINT_SLACK = 0.0002  # MiB: the %.4f print's half unit plus ggml's per-tensor alignment (< 120 B seen)

# (TinyQwen35 changes, -c, -ub, -np) -> the printed MiB
MEASURED = {
    ((), 1024, 128, 1): 1.7720, ((), 1024, 256, 1): 3.5264, ((), 1024, 512, 1): 7.0352, ((), 1024, 1024, 1): 14.0528,
    ((), 4096, 512, 1): 10.0352, ((), 1024, 512, 2): 6.5528, ((), 1024, 1024, 2): 13.0704,
    ((("hidden", 512),), 1024, 512, 1): 8.5352, ((("hidden", 512),), 1024, 1024, 1): 17.0528,
    ((("ffn", 1024),), 1024, 512, 1): 8.5176, ((("ffn", 1024),), 1024, 1024, 1): 17.0352,
    ((("ffn", 2048),), 1024, 512, 1): 14.5176, ((("ffn", 2048),), 1024, 1024, 1): 29.0352,
    ((("v_heads", 16),), 1024, 512, 1): 10.0469, ((("v_heads", 16),), 1024, 1024, 1): 20.0645,
    ((("state", 128),), 1024, 512, 1): 11.5528, ((("state", 128),), 1024, 1024, 1): 23.0704,
    ((("groups", 4),), 1024, 512, 1): 8.5411, ((("groups", 4),), 1024, 1024, 1): 17.0587,
    ((("conv", 6),), 1024, 512, 1): 7.0469,
    ((("state", 128), ("v_heads", 16)), 1024, 128, 1): 6.4380,
    ((("state", 128), ("v_heads", 16)), 1024, 192, 1): 9.1277,
    ((("state", 128), ("v_heads", 16)), 1024, 256, 1): 8.8174,
    ((("state", 128), ("v_heads", 16)), 1024, 320, 1): 11.0071,
    ((("state", 128), ("v_heads", 16)), 1024, 384, 1): 13.7086,
    ((("state", 128), ("v_heads", 16)), 1024, 448, 1): 15.6600,
    ((("state", 128), ("v_heads", 16)), 1024, 512, 1): 17.6114,
    ((("state", 128), ("v_heads", 16)), 1024, 640, 1): 21.9556,
    ((("state", 128), ("v_heads", 16)), 1024, 768, 1): 26.3350,
    ((("state", 128), ("v_heads", 16)), 1024, 1024, 1): 35.0938,
    ((("state", 128), ("v_heads", 16)), 512, 256, 2): 12.6260,
    ((("state", 128), ("v_heads", 16), ("groups", 4)), 1024, 256, 1): 10.3292,
    ((("state", 128), ("v_heads", 16), ("hidden", 512)), 1024, 256, 1): 10.0381,
    ((("state", 128), ("v_heads", 16), ("hidden", 512)), 1024, 512, 1): 19.1114,
    ((("state", 128), ("v_heads", 16), ("hidden", 512)), 1024, 1024, 1): 38.0938,
    ((("state", 128), ("v_heads", 32)), 1024, 256, 1): 14.8643,
    ((("state", 128), ("v_heads", 32)), 1024, 512, 1): 31.7051,
    # qwen35moe (4 experts of n_ff 128, 2 used, a shared one): the same delta-net layer code
    ((("experts", 4), ("ffn", 128), ("v_heads", 16)), 1024, 512, 1): 10.0469,
    ((("experts", 4), ("ffn", 128), ("v_heads", 16)), 4096, 1024, 1): 26.0645,
}
# Exact where the conv rows (channels x tokens) outweigh one sequence's scan state (d_state x d_inner) more than
# five times; below that ggml-alloc sometimes leaves gaps, measured up to 2.5 scan states per sequence.
EXACT_RATIO = 5
MOST_GAP_STATES = 2.5


@pytest.fixture(scope="module")
def facts_of(tmp_path_factory):
    cache: dict = {}
    folder = tmp_path_factory.mktemp("qwen35")

    def facts(changes) -> tuple[TinyQwen35, ModelFacts]:
        if changes not in cache:
            shape = replace(TinyQwen35(), **dict(changes))
            path = write_tiny_qwen35_gguf(folder / f"q{len(cache)}.gguf", shape)
            cache[changes] = shape, read_local_gguf(Path(path))
        return cache[changes]

    return facts


def _gsg_on_cpu(shape: TinyQwen35, facts: ModelFacts, cells: int, tokens: int, slots: int) -> int:
    """gsg's buffer for one CPU device holding everything (one reserved output per slot at this build) plus the
    CPU graph's extra rows."""
    gsg = compute_buffer(cells, tokens, facts, True, output_device=True, version=BUILD, outputs=slots,
                         sequences=slots)
    return gsg + (CPU_EXTRA_HIDDEN_ROWS * shape.hidden + CPU_EXTRA_VALUES) * tokens * F32


def _channels(shape: TinyQwen35) -> int:
    return shape.inner + 2 * shape.groups * shape.state


def _is_exact(shape: TinyQwen35, tokens: int) -> bool:
    return _channels(shape) * tokens > EXACT_RATIO * shape.state * shape.inner


@pytest.mark.parametrize("run", list(MEASURED))
def test_the_measured_cpu_buffer(facts_of, run):
    changes, ctx, tokens, slots = run
    shape, facts = facts_of(changes)
    cells = ctx // slots  # -np N without --kv-unified: one stream of n_ctx / N cells per slot
    gsg = _gsg_on_cpu(shape, facts, cells, tokens, slots) / MiB
    printed = MEASURED[run]
    if _is_exact(shape, tokens):
        assert abs(gsg - printed) <= PRINT_SLACK, (gsg, printed)
    else:
        # gsg counts the live tensors; the gaps ggml-alloc leaves between them come on top
        gap_states = (printed - gsg) * MiB / (shape.state * shape.inner * F32 * slots)
        assert printed - gsg >= -PRINT_SLACK and gap_states <= MOST_GAP_STATES + 0.001, (gsg, printed, gap_states)


def test_most_runs_are_exact_and_the_delta_net_stage_peaks_in_them(facts_of):
    exact = [run for run in MEASURED if _is_exact(facts_of(run[0])[0], run[2])]
    assert len(exact) == 25
    peaks = {"delta": 0, "ffn": 0}
    for changes, ctx, tokens, slots in exact:
        _, facts = facts_of(changes)
        delta = delta_net_scratch(ctx // slots, tokens, facts, True, False, BUILD, slots)
        ffn = ffn_scratch(ctx // slots, tokens, facts, True, False, BUILD)
        peaks["delta" if delta > ffn else "ffn"] += 1
    assert peaks == {"delta": 21, "ffn": 4}  # the n_ff 1024 / 2048 runs peak in the feed-forward stage


def test_without_the_delta_net_stage_the_exact_runs_miss(facts_of):
    # the stage is what makes them exact: the feed-forward stage alone is short by the conv rows
    changes, ctx, tokens, slots = ((), 1024, 512, 1)
    shape, facts = facts_of(changes)
    plain = replace(facts, architecture="qwen3next")  # an architecture without a row
    without = compute_buffer(ctx, tokens, plain, True, True, version=BUILD, outputs=1, sequences=1)
    extra = (CPU_EXTRA_HIDDEN_ROWS * shape.hidden + CPU_EXTRA_VALUES) * tokens * F32
    assert (without + extra) / MiB == pytest.approx(5.5176, abs=PRINT_SLACK)  # printed: 7.0352
    assert MEASURED[(changes, ctx, tokens, slots)] - (without + extra) / MiB > 1.5


def _qwen35_27b(architecture="qwen35") -> ModelFacts:
    # Qwen3.5-27B as its GGUF header has it (the kept b8586 log): 64 layers, every fourth attention, d_inner 6144
    # in 48 value heads of 128, 16 key groups, d_conv 4, n_ff 17408, vocabulary 248,320
    attention = tuple((il + 1) % 4 == 0 for il in range(64))
    state = RecurrentState("ssm", conv_kernel=4, inner_size=6144, state_size=128, group_count=16,
                           recurrent=tuple(not a for a in attention), attention=attention)
    return ModelFacts(architecture=architecture, num_hidden_layers=64, hidden_size=5120, num_attention_heads=24,
                      num_key_value_heads=4, head_dim=256, intermediate_size=17408, vocab_size=248320,
                      max_position_embeddings=262144, recurrent_state=state)


def test_qwen35_27b_at_the_public_logs_settings():
    facts = _qwen35_27b()
    assert facts.gated_mlp
    tokens, cells = 1024, 131072
    delta = delta_net_scratch(cells, tokens, facts, True, False, BUILD, 1)
    # 2 x 5120 + 3 x 10240 rows x 1,024 x 4 B + the f16 mask (256 MiB) + 2 x 3 x 10240 x 4 B of conv states
    assert delta == (2 * 5120 + 3 * 10240) * tokens * F32 + cells * tokens * 2 + 2 * 3 * 10240 * F32
    assert delta / MiB == 416.234375
    # below the feed-forward stage (n_ff 17408 > 10240 conv channels) and far below the logits: the log's
    # 1,401.75 MiB refused on CUDA0 is not the delta-net stage; at b8586 (no row) nothing changes
    assert delta < ffn_scratch(cells, tokens, facts, True, False, BUILD) < output_logits(facts, tokens)
    assert delta_net_scratch(cells, tokens, facts, True, False, "b8586", 1) == 0


def test_the_stage_is_keyed_by_build_and_architecture():
    assert P.llamacpp_delta_net_form("b8586").conv_rows is None
    assert P.llamacpp_delta_net_form(BUILD).conv_rows == 3
    facts = _qwen35_27b()
    assert delta_net_scratch(4096, 512, facts, True, False, BUILD, 1) > 0
    assert delta_net_scratch(4096, 512, _qwen35_27b("qwen35moe"), True, False, BUILD, 1) > 0  # the same layer code
    assert delta_net_scratch(4096, 512, _qwen35_27b("qwen3next"), True, False, BUILD, 1) == 0  # another graph
    assert delta_net_scratch(4096, 512, replace(facts, recurrent_state=None), True, False, BUILD, 1) == 0
    # each reserved sequence has its own conv states
    two = delta_net_scratch(4096, 512, facts, True, False, BUILD, 2)
    assert two - delta_net_scratch(4096, 512, facts, True, False, BUILD, 1) == 2 * 3 * 10240 * F32


def test_the_engine_counts_the_stage_only_on_devices_with_recurrent_layers(facts_of):
    # n_ff 256 so that the delta-net stage (768 conv channels) is the peak wherever it counts
    _, facts = facts_of((("ffn", 256),))
    # two slots in one unified cache: the mask spans all 1,024 cells, each slot keeps its conv states
    cfg = LlamaCppConfig(ctx_size=1024, parallel=2, flash_attn=True, ubatch_size=512)
    one = estimate_llamacpp(facts, [16 * GiB], cfg, version=BUILD)
    expected = delta_net_scratch(1024, 512, facts, True, True, BUILD, 2)
    assert one.compute_buffer_per_gpu == (expected,)
    assert "delta-net-fused-conv-stage" in one.extra["term_rules"][COMPUTE_BUFFER][0]
    # two GPUs, the second with only layer 3 (attention) and the output: no delta-net stage there (the KV cache
    # on the host keeps pipeline parallelism and its input copies out of the comparison)
    split = estimate_llamacpp(facts, [16 * GiB, 16 * GiB], replace(cfg, tensor_split=(3.0, 2.0), no_kv_offload=True),
                              version=BUILD)
    first, second = split.extra["per_device"]
    assert (first["layers"], second["layers"]) == (3, 1)
    assert first["compute"] == expected
    assert second["compute"] == compute_buffer(1024, 512, facts, True, True, version=BUILD, outputs=2,
                                               recurrent_layers=False)
    assert second["compute"] < first["compute"]
    old = estimate_llamacpp(facts, [16 * GiB], cfg, version="b8586")
    assert old.compute_buffer_per_gpu[0] < expected
    assert "delta-net" not in old.extra["term_rules"][COMPUTE_BUFFER][0]
