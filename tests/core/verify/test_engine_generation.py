"""Which vLLM engine generation a log shows: a V0 log of a release that defaults to V1 (VLLM_USE_V1=0) is
estimated with V0's profile, not V1's activation and sampler (benchmarks/vectors/MISSES.md)."""

from pathlib import Path

import pytest

from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "vllm"


def parsed(lines, engine=P.VLLM):
    log, _ = parse_log([line + "\n" for line in lines], engine)
    return log


V0_PROFILE = "INFO 02-11 10:17:54 [executor_base.py:113] # cuda blocks: 36184, # CPU blocks: 2340"
V1_TOKENS = "INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens"
READY = ("INFO 02-11 10:17:59 [llm_engine.py:428] init engine (profile, create kv cache, warmup model) took "
         "5.13 seconds")


@pytest.mark.parametrize("lines, generation, env", [
    ([V0_PROFILE, READY], "v0", {"VLLM_USE_V1": "0"}),  # V0's llm_engine prints the 'init engine' line too
    ([V1_TOKENS, READY], "v1", {"VLLM_USE_V1": "1"}),
    ([V0_PROFILE, V1_TOKENS], None, {}),  # both: the log cannot tell
    ([READY], None, {}),
])
def test_the_generation_is_read_from_lines_only_one_engine_prints(lines, generation, env):
    log = parsed(lines)
    assert C.engine_generation(log) == generation and C.generation_env(log) == env


@pytest.mark.parametrize("name, generation", [
    ("v0-qwen3-06b-h100-gmu080.log", "v0"), ("v0.9-qwen3-4b-v100-40k.log", "v0"),
    ("v1-0.8.5-llama31-8b-l40s.log", "v1"), ("v1-qwen3-235b-fp8-h100-tp4.log", "v1"),
])
def test_public_logs_name_their_generation(name, generation):
    log, _ = parse_log((LOGS / name).read_text(encoding="utf-8").splitlines(True), P.VLLM)
    assert C.engine_generation(log) == generation


def test_an_sglang_log_has_no_vllm_generation():
    assert C.engine_generation(parsed(["[2025-01-01 00:00:00] max_total_num_tokens=1000"], P.SGLANG)) is None


@pytest.mark.parametrize("line,env", [
    ("(EngineCore_0 pid=2881) INFO 09-04 01:29:01 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k "
     "sampling.", {"VLLM_USE_FLASHINFER_SAMPLER": "1"}),
    ("WARNING 09-24 20:46:11 [topk_topp_sampler.py:69] FlashInfer is not available. Falling back to the "
     "PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install "
     "FlashInfer.", {"VLLM_USE_FLASHINFER_SAMPLER": "0"}),
    ("INFO 09-04 01:29:02 [cuda.py:328] Using Flash Attention backend on V1 engine.", {}),
])
def test_the_sampler_path_a_log_names_is_the_estimates_environment(line, env):
    log, _ = parse_log([line + "\n"], P.VLLM)
    # 0.11.1: a release whose sampler path the install does not decide, so a line that names none sets nothing
    assert C.sampler_env(log, "0.11.1") == env
    assert C.engine_env(log, "0.11.1") == {**C.generation_env(log), **env}


def test_a_log_naming_both_sampler_paths_sets_neither():
    lines = ["INFO [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n",
             "WARNING [topk_topp_sampler.py:69] Falling back to the PyTorch-native implementation of top-p & top-k "
             "sampling.\n"]
    log, _ = parse_log(lines, P.VLLM)
    assert C.sampler_env(log) == {}


@pytest.mark.parametrize("version,env", [
    ("0.10.1", {"VLLM_USE_FLASHINFER_SAMPLER": "0"}),  # 0.9.0-0.11.0: the install decides; unknown: the sort
    ("0.9.0", {"VLLM_USE_FLASHINFER_SAMPLER": "0"}), ("0.11.0", {"VLLM_USE_FLASHINFER_SAMPLER": "0"}),
    ("0.8.5", {}), ("0.11.1", {}), ("0.21.0", {}),  # every install runs the same path there
    # no version in the log: the estimate takes the default release (0.11.0), where the install decides
    (None, {"VLLM_USE_FLASHINFER_SAMPLER": "0"}),
])
def test_a_log_silent_on_its_sampler_takes_the_install_that_sorts_where_the_install_decides(version, env):
    log, _ = parse_log(["INFO 01-16 09:40:00 [gpu_model_runner.py:1] Model loading took 14.99 GiB\n"], P.VLLM)
    assert C.sampler_env(log, version) == env


def test_a_logged_sampler_line_wins_over_the_silent_log_assumption():
    log, _ = parse_log(["INFO [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n"], P.VLLM)
    assert C.sampler_env(log, "0.10.1") == {"VLLM_USE_FLASHINFER_SAMPLER": "1"}


# custom all-reduce's no-P2P lines: the group's NCCL runs without P2P (profiles.NCCL_P2P_DISABLE_ENV)
@pytest.mark.parametrize("line", [
    "(VllmWorker TP0 pid=1430) WARNING 09-03 00:36:44 [custom_all_reduce.py:147] Custom allreduce is disabled because "
    "your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
    "disable_custom_all_reduce=True explicitly.\n",
    "(RayWorkerWrapper pid=1384) WARNING 09-03 04:38:28 [custom_all_reduce.py:85] Custom allreduce is disabled because "
    "this process group spans across nodes.\n",
])
def test_a_log_showing_no_p2p_between_ranks_sets_nccl_without_p2p_and_custom_all_reduce_off(line):
    log, _ = parse_log([line], P.VLLM)
    assert C.p2p_env(log) == {"NCCL_P2P_DISABLE": "1"}
    assert C.printed_env(log)["NCCL_P2P_DISABLE"] == "1"  # printed: it wins over an env the user gives
    assert C.deployment_env(log, {"NCCL_P2P_DISABLE": "0"})["NCCL_P2P_DISABLE"] == "1"
    assert "--disable-custom-all-reduce" in C.backend_args(log)


# the attention backend the platform picked: FLASHINFER is carried into the rebuild (its workspace is graph memory,
# profiles.VLLM_FLASHINFER_CAPTURE_WORKSPACE); each release's wording
@pytest.mark.parametrize("line", [
    "INFO 08-20 10:00:00 [cuda.py:275] Using FlashInfer backend on V1 engine.\n",  # 0.10.1, 0.11.0
    "(Worker_TP0 pid=7) INFO 11-20 10:00:00 [cuda.py:428] Using FLASHINFER backend.\n",  # 0.11.1 (auto)
    "INFO 12-20 10:00:00 [cuda.py:315] Using AttentionBackendEnum.FLASHINFER backend.\n",  # 0.13.0 (named)
    "INFO 11-20 10:00:00 [cuda.py:377] Using _Backend.FLASHINFER backend.\n",  # 0.11.1 (named)
    "qwen3-next-instruct | (Worker_TP0 pid=306) INFO 02-12 19:46:45 [cuda.py:351] Using FLASHINFER attention backend "
    "out of potential backends: ('FLASHINFER', 'TRITON_ATTN')\n",  # 0.12.0 .. 0.24.0
])
def test_a_log_naming_flashinfer_as_its_attention_backend_rebuilds_with_it(line):
    log, _ = parse_log([line], P.VLLM)
    assert "--attention-backend=FLASHINFER" in C.backend_args(log)


@pytest.mark.parametrize("line", [
    "INFO 08-20 10:00:00 [cuda.py:278] Using FlashInfer MLA backend on V1 engine.\n",
    "INFO 11-20 10:00:00 [cuda.py:428] Using FLASHINFER_MLA backend.\n",
    "INFO 12-20 10:00:00 [cuda.py:526] Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', "
    "'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].\n",
    "INFO 12-20 10:00:00 [cuda.py:423] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention\n",
    "INFO 12-20 10:00:00 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n",
])
def test_other_backend_lines_name_no_flashinfer_attention(line):
    log, _ = parse_log([line], P.VLLM)
    assert not any(flag.startswith("--attention-backend") for flag in C.backend_args(log))


def test_a_printed_attention_backend_argument_wins_over_the_picked_line():
    log, _ = parse_log([
        "INFO 12-20 10:00:00 [utils.py:253] non-default args: {'model': 'm', 'attention_backend': 'TRITON_ATTN'}\n",
        "INFO 12-20 10:00:00 [cuda.py:351] Using FLASHINFER attention backend out of potential backends: "
        "('FLASHINFER',)\n"], P.VLLM)
    assert [f for f in C.backend_args(log) if f.startswith("--attention-backend")] == \
        ["--attention-backend=TRITON_ATTN"]


@pytest.mark.parametrize("line", [
    # PCIe-only boards beyond two GPUs: custom all-reduce is off, NCCL's P2P over PCIe is not (the name decides)
    "WARNING 09-24 20:53:30 [custom_all_reduce.py:137] Custom allreduce is disabled because it's not supported on "
    "more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.\n",
    "INFO 09-03 00:36:44 [custom_all_reduce.py:35] Skipping P2P check and trusting the driver's P2P report.\n",
])
def test_other_custom_all_reduce_lines_leave_the_interconnect_to_the_gpu_name(line):
    log, _ = parse_log([line], P.VLLM)
    assert C.p2p_env(log) == {} and "--disable-custom-all-reduce" not in C.backend_args(log)


def test_the_printed_environment_never_carries_the_silent_log_assumption():
    # the assumption (the sort, for a release whose sampler depends on the install) yields to the user's --env;
    # only a printed sampler line wins over it (deployment_env's order)
    silent, _ = parse_log(["INFO 01-16 09:40:00 [gpu_model_runner.py:1] Model loading took 14.99 GiB\n"], P.VLLM)
    assert C.printed_env(silent) == {}
    assert C.deployment_env(silent, {"VLLM_USE_FLASHINFER_SAMPLER": "1"}, "0.10.1") == \
        {"VLLM_USE_FLASHINFER_SAMPLER": "1"}
    assert C.deployment_env(silent, {}, "0.10.1") == {"VLLM_USE_FLASHINFER_SAMPLER": "0"}


@pytest.mark.parametrize("line,booked,ran", [
    ("INFO 01-27 00:31:44 [mxfp4.py:165] Using Triton backend", "marlin", "triton"),  # triton_kernels by hand
    ("INFO 10-02 09:00:00 [mxfp4.py:101] Using Marlin backend", "triton", "marlin"),
])
def test_a_logged_mxfp4_kernel_other_than_the_booked_one_is_a_note(line, booked, ran):
    """vLLM's MXFP4 kernel on Hopper before 0.12.0 depends on whether the image holds triton_kernels
    (profiles.VLLM_GPUSTACK_IMAGES): a log that names the kernel it ran says so where gsg booked the other."""
    log, _ = parse_log([line + "\n"], P.VLLM)
    assert C.kernel_notes(log, booked) == [
        f"the log says vLLM ran the {ran} MXFP4 MoE kernel, the estimate booked {booked} (GPUStack's image of this "
        "release): the experts' padding differs by the kernel (profiles.MXFP4_PADDING)"]
    assert C.kernel_notes(log, ran) == [] and C.kernel_notes(log, None) == []


def test_the_attention_backends_triton_line_is_not_the_mxfp4_kernel():
    log, _ = parse_log(["INFO 09-10 23:27:30 [cuda.py:323] Using Triton backend on V1 engine.\n"], P.VLLM)
    assert "vllm-mxfp4-triton" not in log.matched and C.kernel_notes(log, "marlin") == []
    fixture = LOGS / "v1-0.10.1-gpt-oss-120b-h100-pcie-no-kv-memory.log"
    marlin, _ = parse_log(fixture.read_text().splitlines(keepends=True), P.VLLM)  # vllm#23278: the Marlin warning, as gsg books at 0.10.1 on Hopper
    assert "vllm-fp4-marlin" in marlin.matched and C.kernel_notes(marlin, "marlin") == []


@pytest.mark.parametrize("args_line,expected", [
    # the args line's full fraction, which the profile line prints to two places: the full one sizes the budget
    ("gpu_memory_utilization=0.8938626454842437", "--gpu-memory-utilization=0.8938626454842437"),
    ("gpu_memory_utilization=0.9", "--gpu-memory-utilization=0.89"),  # another figure: the engine's printed one wins
])
def test_the_args_lines_full_fraction_wins_over_its_rounded_profile_figure(args_line, expected):
    lines = [
        f"INFO 05-05 15:15:08 [api_server.py:982] args: Namespace(model='unsloth/Llama-3.2-3B-Instruct', "
        f"max_model_len=2048, {args_line}, enforce_eager=False)\n",
        "INFO 05-05 15:25:32 [worker.py:267] the current vLLM instance can use total_gpu_memory (14.74GiB) x "
        "gpu_memory_utilization (0.89) = 13.18GiB\n",
    ]
    log, _ = parse_log(lines, P.VLLM)
    assert expected in C.backend_args(log)


@pytest.mark.parametrize("printed, expected", [
    # vLLM's non-default args print the parsed dict (a Python literal): it goes back as the JSON the flag takes
    ("INFO 06-21 07:16:52 [utils.py:278] non-default args: {'model': 'deepseek-ai/DeepSeek-V4-Flash', "
     "'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 2}}",
     '--speculative-config={"method": "mtp", "num_speculative_tokens": 2}'),
    # a Namespace that kept the command line's JSON string passes it unchanged
    ("INFO 05-05 15:15:08 [api_server.py:982] args: Namespace(model='Qwen/Qwen3-8B', "
     "speculative_config='{\"method\": \"ngram\", \"num_speculative_tokens\": 3}')",
     '--speculative-config={"method": "ngram", "num_speculative_tokens": 3}'),
])
def test_a_printed_speculative_config_goes_back_as_json(printed, expected):
    log, _ = parse_log([printed + "\n"], P.VLLM)
    assert [a for a in C.backend_args(log) if a.startswith("--speculative-config")] == [expected]
