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


# an excerpt without the arguments line (noonghunna/club-3090#1261: 2x RTX 5090, a hybrid GDN model with a draft,
# 2026-09): each rank prints its pool twice, the second after its "Memory pool end", with the same token count
CLUB_TP0 = [
    "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: 3.46 GB, "
    "V size: 3.46 GB",
    "[2026-09-12 00:22:48 TP0] Memory pool end. avail mem=8.40 GB",
    "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: 1.08 GB, "
    "V size: 1.08 GB",
    "[2026-09-12 00:22:48 TP0] Memory pool end. avail mem=6.23 GB",
]


def test_without_arguments_a_second_pool_of_the_same_count_after_the_pool_end_is_the_drafts():
    log, _ = parse_log([line + "\n" for line in CLUB_TP0 + [line.replace("TP0", "TP1") for line in CLUB_TP0]],
                       "sglang")
    for rank in ("TP0", "TP1"):
        assert log.ranks[rank] == {P.KV_TOKENS: 454_112, P.KV_CACHE: 2 * gib(3.46), P.FREE_AFTER_POOL: gib(8.40)}


def test_without_arguments_a_pool_of_another_count_still_replaces():
    # not the draft's (its pool is the target's token count): another start-up's, whose figures are the ones read
    other = [CLUB_TP0[0], CLUB_TP0[1], CLUB_TP0[2].replace("454112", "300000"), CLUB_TP0[3]]
    assert read(other) == {P.KV_TOKENS: 300_000, P.KV_CACHE: 2 * gib(1.08), P.FREE_AFTER_POOL: gib(6.23)}


def test_an_arguments_line_without_a_draft_keeps_the_later_pool():
    args = ARGS.format(algo=None)
    assert read([args, *CLUB_TP0])[P.KV_CACHE] == 2 * gib(1.08)
