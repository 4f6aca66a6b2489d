"""SGLang's EAGLE-style draft worker prints its own load and pool lines on every rank (P.SGLANG_LOAD_LINES): the
target's figures are the ones read, in the order of either release line (the draft after the target's pool up to
0.5.13, its weights before the target's pool from 0.5.14)."""

from __future__ import annotations

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

ARGS = ("[2025-12-01 10:00:00] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, "
        "speculative_algorithm={algo!r}, speculative_num_steps=3)")
TARGET_LOAD = ("[2025-12-01 10:01:00 TP0] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, "
               "avail mem=61.20 GB, mem usage=78.40 GB.")
DRAFT_LOAD = ("[2025-12-01 10:02:00 TP0] Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, "
              "avail mem=59.25 GB, mem usage=1.95 GB.")
TARGET_POOL = "[2025-12-01 10:01:10 TP0] KV Cache is allocated. #tokens: 656694, KV size: 42.97 GB"
DRAFT_POOL = "[2025-12-01 10:02:10 TP0] KV Cache is allocated. #tokens: 656694, KV size: 0.70 GB"
TARGET_END = "[2025-12-01 10:01:11 TP0] Memory pool end. avail mem=16.10 GB"
DRAFT_END = "[2025-12-01 10:02:11 TP0] Memory pool end. avail mem=14.00 GB"


def read(lines: list[str]) -> dict:
    log, _ = parse_log([line + "\n" for line in lines], "sglang")
    return log.terms()


def gib(x: float) -> int:
    return int(round(x * 2**30))


@pytest.mark.parametrize("order", [
    # 0.5.2-0.5.13: the target's ModelRunner sizes its pool before the draft worker is built
    [TARGET_LOAD, TARGET_POOL, TARGET_END, DRAFT_LOAD, DRAFT_POOL, DRAFT_END],
    # 0.5.14+: both models load, then the target's pool, then the draft's
    [TARGET_LOAD, DRAFT_LOAD, TARGET_POOL, TARGET_END, DRAFT_POOL, DRAFT_END],
])
def test_the_drafts_lines_are_not_the_targets(order):
    got = read([ARGS.format(algo="EAGLE"), *order])
    assert (got[P.WEIGHTS], got[P.KV_CACHE], got[P.KV_TOKENS], got[P.FREE_AFTER_POOL]) == \
        (gib(78.40), gib(42.97), 656_694, gib(16.10))


def test_without_speculative_decoding_a_later_line_still_replaces():
    got = read([ARGS.format(algo=None), TARGET_LOAD, TARGET_POOL, DRAFT_LOAD, DRAFT_POOL])
    assert (got[P.WEIGHTS], got[P.KV_CACHE]) == (gib(1.95), gib(0.70))


def test_a_restart_reads_the_new_targets_lines():
    first = [ARGS.format(algo="EAGLE"), TARGET_LOAD, TARGET_POOL, DRAFT_LOAD, DRAFT_POOL]
    second = [ARGS.format(algo="EAGLE"), TARGET_LOAD.replace("78.40", "77.00"), TARGET_POOL.replace("42.97", "40.00"),
              DRAFT_LOAD, DRAFT_POOL]
    got = read(first + second)
    assert (got[P.WEIGHTS], got[P.KV_CACHE]) == (gib(77.00), gib(40.00))


def test_the_rebuild_keeps_the_drafts_shape_and_only_a_draft_of_its_own():
    from gpustack_guard.core.verify.compare import backend_args

    args = ARGS.format(algo="EAGLE")[:-1] + (", speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
                                             "speculative_draft_model_path='deepseek-ai/DeepSeek-V3')")
    log, _ = parse_log([args + "\n", TARGET_LOAD + "\n"], "sglang")
    flags = backend_args(log)
    assert {"--speculative-algorithm=EAGLE", "--speculative-num-steps=3", "--speculative-eagle-topk=1",
            "--speculative-num-draft-tokens=4"} <= set(flags)
    assert not any(flag.startswith("--speculative-draft-model-path") for flag in flags)  # the model's own MTP
    other, _ = parse_log([args.replace("'deepseek-ai/DeepSeek-V3')", "'some/eagle3-draft')") + "\n"], "sglang")
    assert "--speculative-draft-model-path=some/eagle3-draft" in backend_args(other)
