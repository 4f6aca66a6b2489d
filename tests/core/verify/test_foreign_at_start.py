"""Memory other processes held when an SGLang instance started, read from its log: SGLang sizes the pool from the
free memory it measures before the weights, so a desktop session or another process on the card shrinks it (the
public WSL and Docker Desktop logs: +13.2 % and +20.8 % KV before this was read, +1.7 % and +0.1 % after)."""

from __future__ import annotations

from support import REPO

from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import foreign_at_start
from gpustack_guard.core.verify.logparse import parse_log

LOGS = REPO / "tests" / "fixtures" / "logs"
RTX_24GB = 24564 * MiB  # what CUDA reports for an RTX 3090 / 4090


def parsed(name: str):
    return parse_log((LOGS / name).read_text(encoding="utf-8").splitlines(keepends=True))[0]


def test_a_log_with_the_free_memory_before_the_weights_gives_what_a_clean_gpu_would_have_had_more():
    log = parsed("sglang/r1-distill-qwen7b-rtx3090-wsl.log")
    free = log.terms()[P.FREE_BEFORE_LOAD]
    assert foreign_at_start(log, RTX_24GB, 1, 1, "NVIDIA GeForce RTX 3090") == \
        RTX_24GB - MP.SGLANG_START_UP_SINGLE - free > 0


def test_a_log_with_only_the_end_of_loading_adds_the_weights_back():
    log = parsed("sglang/llama31-8b-24gb-docker-desktop.log")
    terms = log.terms()
    assert P.FREE_BEFORE_LOAD not in terms
    assert (terms[P.FREE_AFTER_LOAD], terms[P.WEIGHTS]) == (round(7.37 * GiB), round(15.02 * GiB))
    assert foreign_at_start(log, RTX_24GB, 1, 1, "NVIDIA GeForce RTX 4090") == \
        RTX_24GB - MP.SGLANG_START_UP_SINGLE - round(7.37 * GiB) - round(15.02 * GiB) == 1_179_270_513


def test_a_gpu_with_all_it_should_have_is_no_foreign_memory_and_other_engines_are_not_read():
    line = "[2025-07-14 05:48:40] Load weight begin. avail mem={} GB\n"
    clean, _ = parse_log([line.format("23.49")], "sglang")
    assert foreign_at_start(clean, RTX_24GB, 1, 1, "") == 0  # more than the start-up figure leaves: not negative
    tp2 = parse_log([line.format("21.50")], "sglang")[0]
    # the layout's own start-up is taken first: TP 2 on PCIe boards reserves less than on NVLink ones
    assert foreign_at_start(tp2, RTX_24GB, 2, 1, "NVIDIA GeForce RTX 4090") == \
        RTX_24GB - MP.SGLANG_START_UP_PCIE_PARALLEL - round(21.5 * GiB)
    assert foreign_at_start(tp2, RTX_24GB, 2, 1, "NVIDIA H100 80GB HBM3") == 0  # NVLink start-up covers it
    vllm = parsed("vllm/v1-0.8.5-llama31-8b-l40s.log")
    assert foreign_at_start(vllm, 48 * GiB, 1, 1, "NVIDIA L40S") == 0


def test_verify_counts_it_and_says_so(gsg):
    result = gsg("verify", "--log", str(LOGS / "sglang" / "llama31-8b-24gb-docker-desktop.log"), "--gpu-memory",
                 "24564MiB", "--gpu-name", "NVIDIA GeForce RTX 4090", "--model", "meta-llama/Llama-3.1-8B", "--backend-version", "0.4.9.post2",
                 "--output", "json")
    import json

    doc = json.loads(result.out)
    assert (doc["observed"][P.KV_TOKENS], doc["estimated"][P.KV_TOKENS]) == (38141, 38169)
    assert "1.10 GiB of the GPU was in use by other processes when the engine started (its free memory before " \
           "the weights, against a clean GPU): counted as foreign memory, as validate counts a worker's" in doc["notes"]
