"""Memory other processes held when an SGLang instance started, read from its log: SGLang sizes the pool from the
free memory it measures before the weights, so a desktop session or another process on the card shrinks it (the
public WSL and Docker Desktop logs: +13.2 % and +20.8 % KV before this was read, +1.7 % and +0.1 % after). llama.cpp's
fixed buffers do not shrink: beside such memory they fail (round 29's ROCm log: "fits" before, does-not-fit after)."""

from __future__ import annotations

from support import REPO

from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.memory.estimate import DOES_NOT_FIT, FITS
from gpustack_guard.core.units import GiB, MiB
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.compare import (
    GPU_OVERCOMMIT,
    TP_HEADS,
    engine_verdict,
    foreign_at_start,
    llamacpp_foreign_at_start,
)
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


# --- llama.cpp (round 29): each device prints its free memory at the load, its backend already up -------------------

PRO_VII = 16368 * MiB  # the same log's breakdown table: the Radeon Pro VII's total


def test_a_llamacpp_device_that_had_less_than_a_clean_card_held_others_memory():
    # the ROCm log at b7972: 10,874 MiB free of 16,368 (another llama-server and the desktop on the card)
    log = parsed("llama.cpp/bielik-11b-q8-rocm-pro-vii-b7972-q8kv-40-of-51-kv-oom.log")
    assert log.terms()[P.FREE_BEFORE_LOAD] == 10874 * MiB
    assert foreign_at_start(log, PRO_VII, 1, 1, "") == llamacpp_foreign_at_start(log, PRO_VII) == \
        (16368 - 500 - 10874) * MiB == 5_236_588_544
    assert 500 * MiB == MP.LLAMACPP_PLATFORM_FOOTPRINT  # the runtime's own share, as the estimate books it


def device_lines(*rows: str):
    return parse_log([f"llama_model_load_from_file_impl: using device {row} MiB free\n" for row in rows],
                     "llama.cpp")[0]


def test_the_least_of_the_cards_counts_and_a_host_device_is_not_read():
    two = device_lines("CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 9862",
                       "CUDA1 (NVIDIA GeForce RTX 3090) (0000:02:00.0) - 20001")
    # one size is given for both: the card with more free memory bounds what others can have held on each
    assert llamacpp_foreign_at_start(two, RTX_24GB) == (24564 - 500 - 20001) * MiB
    # the wording before the PCI bus id (b6900), Vulkan's and HIP's names alike
    assert llamacpp_foreign_at_start(device_lines("CUDA0 (NVIDIA GeForce RTX 4090) - 15001"), RTX_24GB) == \
        (24564 - 500 - 15001) * MiB
    assert llamacpp_foreign_at_start(device_lines("Vulkan0 (NVIDIA GeForce RTX 3090) (0000:c1:00.0) - 23552"),
                                     RTX_24GB) == 512 * MiB
    # a clean card is no foreign memory, not a negative one
    assert llamacpp_foreign_at_start(device_lines("ROCm0 (RX 7900 XTX) (0000:03:00.0) - 24400"), RTX_24GB) == 0
    # Metal's figure is a share of the host's memory, not a card's: nothing is read from it
    assert llamacpp_foreign_at_start(device_lines("Metal (Apple M2 Max) (unknown id) - 20000"), RTX_24GB) == 0
    # a log without the line (its excerpt starts at the buffers) gives nothing
    buffers = parse_log(["load_tensors:        CUDA0 model buffer size =  8753.58 MiB\n"], "llama.cpp")[0]
    assert llamacpp_foreign_at_start(buffers, RTX_24GB) == 0


def test_a_fixed_allocation_beside_others_memory_is_the_engines_out_of_memory():
    # GSG035 over the logged deployment: the engine's own buffers do not fit beside what others held, where the
    # memory arithmetic alone (a clean card) says fits
    assert engine_verdict(FITS, GPU_OVERCOMMIT) == DOES_NOT_FIT
    assert engine_verdict(FITS, TP_HEADS) == TP_HEADS
    assert engine_verdict(FITS, "headroom-low") == FITS
    assert engine_verdict(DOES_NOT_FIT, None) == DOES_NOT_FIT


def test_verify_holds_the_rocm_out_of_memory_against_a_card_others_shared(gsg, tmp_path):
    import json

    config = REPO / "benchmarks" / "vectors" / "bielik-11b-v3" / "config.json"
    result = gsg("verify", "--log", str(LOGS / "llama.cpp" / "bielik-11b-q8-rocm-pro-vii-b7972-q8kv-40-of-51-kv-oom.log"),
                 "--gpu-memory", "16368MiB", "--model", str(config), "--output", "json", "--",
                 "--cache-type-k=q8_0", "--cache-type-v=q8_0")
    doc = json.loads(result.out)
    # before round 29 the card counted as clean: 11.83 GiB of 15.98 "fits", against the engine's refused KV buffer
    assert (doc["observed_verdict"], doc["engine_verdict"], doc["result"]) == (DOES_NOT_FIT, DOES_NOT_FIT, "pass")
    assert doc["estimated"][P.KV_CACHE] == doc["observed"][P.KV_CACHE] == 2_780_823_552
    assert "4.88 GiB of the GPU was in use by other processes when the engine started (its free memory before the " \
           "weights, against a clean GPU): counted as foreign memory, as validate counts a worker's" in doc["notes"]
