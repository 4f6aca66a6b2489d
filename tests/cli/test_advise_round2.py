"""gsg advise, round 2 (issue 36): every emitted option validates clean at --fail-level warning, advise and
estimate agree, the "add N GPUs" hint fits when applied, llama.cpp offload is its own line with its cost and
full-GPU options win, TTFT targets are estimated per option, pools of several workloads, replicas."""

import json
import re

import pytest
import yaml
from support import FLEET, REPO

GPU_A = "gpu-a:cuda:0,gpu-a:cuda:1,gpu-a:cuda:2,gpu-a:cuda:3"
CHAT, BATCH = str(REPO / "workloads" / "chat.yaml"), str(REPO / "workloads" / "nightly-batch.yaml")
LLAMA_70B, LLAMA_8B = "meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"
GGUF = "bartowski/Llama-3.3-70B-Instruct-GGUF:Llama-3.3-70B-Instruct-Q4_K_M.gguf"


def workload_file(tmp_path, name, prompt, output, concurrency, pattern="steady", slo=None):
    path = tmp_path / f"{name}.yaml"
    data = {"name": name, "prompt_tokens": {"p50": prompt[0], "p95": prompt[1], "p99": prompt[2]},
            "output_tokens": {"p50": output[0], "p95": output[1], "p99": output[2]},
            "concurrency": concurrency, "pattern": pattern}
    if slo is not None:
        data["ttft_slo_s"] = slo
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def rag(tmp_path):
    return workload_file(tmp_path, "rag", (4000, 7000, 9000), (300, 800, 1200), 16, slo=3.0)


def advise_json(gsg, *args):
    result = gsg("advise", "-o", "json", *args)
    return result, json.loads(result.out)


def validate_every_option(gsg, tmp_path, doc):
    """Each fitting option's specs, as advise would emit them, through `gsg validate --fail-level warning`."""
    checked = 0
    for i, option in enumerate(doc["options"]):
        if not option["fits"]:
            continue
        folder = tmp_path / f"option-{i}-{option['kind']}"
        folder.mkdir()
        for d in option["deployments"]:
            (folder / f"{d['name']}.yaml").write_text(yaml.safe_dump(d["spec"], sort_keys=False))
        result = gsg("validate", str(folder), "--fleet", str(FLEET), "--fail-level", "warning", "-o", "json")
        report = json.loads(result.out)
        assert result.code == 0, (option["kind"], report["findings"])
        assert report["summary"]["errors"] == report["summary"]["warnings"] == 0
        checked += 1
    return checked


@pytest.mark.parametrize("model, workloads, fitting", [
    (LLAMA_70B, ("chat", "batch"), 2),  # the field notes: two one-pool options, separate cannot hold the weights
    (LLAMA_8B, ("chat", "batch", "rag"), 4),  # three workloads: shared, priority, separate and a pool of two
    (LLAMA_70B, ("chat", "batch", "rag"), 2),
])
def test_every_emitted_option_validates_clean_at_fail_level_warning(gsg, tmp_path, rag, model, workloads, fitting):
    files = {"chat": CHAT, "batch": BATCH, "rag": rag}
    args = [a for name in workloads for a in ("-w", files[name])]
    result, doc = advise_json(gsg, "-m", model, "--fleet", str(FLEET), "--gpus", GPU_A, "--backend-version",
                              "0.11.0", *args)
    assert result.code == 0, result.err
    assert validate_every_option(gsg, tmp_path, doc) == fitting
    shared = doc["options"][0]["deployments"][0]["spec"]["guard"]["workload"]
    assert [m["name"] for m in shared["mix"]] == [{"batch": "nightly-batch"}.get(n, n) for n in workloads]


def test_the_shared_spec_declares_its_mix_so_gsg033_prices_what_advise_sized(gsg, tmp_path):
    _, doc = advise_json(gsg, "-m", LLAMA_70B, "--fleet", str(FLEET), "--gpus", GPU_A, "--backend-version",
                         "0.11.0", "-w", CHAT, "-w", BATCH)
    spec = doc["options"][1]["deployments"][0]["spec"]
    assert spec["guard"]["workload"]["mix"] == [
        {"name": "chat", "prompt_tokens_p99": 2500, "max_output_tokens": 1000, "concurrency": 48},
        {"name": "nightly-batch", "prompt_tokens_p99": 31000, "max_output_tokens": 1500, "concurrency": 2}]
    # a heavier chat peak than advised for: the declared mix no longer fits, and validate prices it longest first
    spec["backend_parameters"] = [p.replace("--max-num-seqs=50", "--max-num-seqs=64") for p in
                                  spec["backend_parameters"]]
    spec["guard"]["workload"]["mix"][0]["concurrency"] = 62
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    result = gsg("validate", str(tmp_path / "s.yaml"), "--fleet", str(FLEET), "-o", "json")
    findings = {f["rule_id"]: f for f in json.loads(result.out)["findings"]}
    # 64 sequences add capture sizes (every multiple of 8 up to 128 under 0.11.0) but a FULL graph only up to 64:
    # advise's gmu still leaves them room, so the declared mix is the one finding
    assert sorted(findings) == ["GSG033"]
    finding = findings["GSG033"]
    assert finding["message"].startswith(
        "--max-num-seqs 64 (workload mix at p99, longest first: 2 x 32,500 (nightly-batch) + 62 x 3,500 (chat)) = "
        "282,000 tokens, but the KV pool holds ")
    # 64 sequences make the profile's sampler phase larger: a smaller pool, of which 2 documents and 59 chats fit
    assert "holds 271,936 tokens" in finding["message"] and "61 such sequences fit at once" in finding["message"]


def test_advise_and_estimate_agree_on_the_same_deployment(gsg, tmp_path):
    wl = workload_file(tmp_path, "w", (11000, 11000, 11000), (2048, 2048, 2048), 32)
    _, doc = advise_json(gsg, "-m", LLAMA_70B, "--fleet", str(FLEET), "--gpus", GPU_A, "--backend-version",
                         "0.11.0", "-w", wl)
    deployment = doc["options"][0]["deployments"][0]
    estimate = gsg("estimate", "-m", LLAMA_70B, "--gpu-memory", "49140MiB", "--gpu-name", "NVIDIA RTX A6000",
                   "--backend-version", "0.11.0", "-o", "json", "--", *deployment["backend_parameters"])
    assert estimate.code == 0, estimate.err
    theirs = json.loads(estimate.out)
    assert (deployment["verdict"], theirs["verdict"]) == ("fits", "fits")
    assert theirs["kv_capacity_tokens"] == deployment["kv_capacity_tokens"] == 284_512
    assert theirs["max_num_seqs"] == deployment["max_num_seqs"] == 21


def test_the_add_gpus_hint_fits_when_applied(gsg):
    result, doc = advise_json(gsg, "-m", LLAMA_70B, "--fleet", str(FLEET), "--gpus", "gpu-a:cuda:0,gpu-a:cuda:1",
                              "--backend-version", "0.11.0", "-w", CHAT, "-w", BATCH)
    assert result.code == 1 and doc["decision"] == "does-not-fit"
    hint = re.match(r"add (\d+) GPUs? of 47.99 GiB \((\d+) in all\): it holds every workload's peak", doc["would_fit"][0])
    assert hint is not None and hint.group(2) == "4"
    again, redone = advise_json(gsg, "-m", LLAMA_70B, "--gpu-memory", "49140MiB", "--gpus", hint.group(2),
                                "--backend-version", "0.11.0", "-w", CHAT, "-w", BATCH)
    assert again.code == 0 and redone["decision"] == "shared" and redone["would_fit"] == []
    assert all(o["serves_peak"] for o in redone["options"] if o["kind"].startswith("shared"))


def test_llamacpp_offload_is_its_own_line_with_its_cost(gsg):
    result, doc = advise_json(gsg, "-m", GGUF, "--backend", "llama.cpp", "--fleet", str(FLEET), "--gpus",
                              "gpu-d:cuda:1", "-w", CHAT)
    assert result.code == 0
    deployment = doc["options"][0]["deployments"][0]
    offload = deployment["offload"]
    # the default build (the newest modelled, b10507) counts the GLU output beside gate and up in the compute buffer
    # (profiles.LLAMACPP_FFN_FORMS) and an f16 KQ mask as its graph input (LLAMACPP_F16_MASK_INPUT_SINCE); the
    # -ngl takes the q6_K output layer first (LLAMACPP_OUTPUT_FIRST_SINCE), where older builds ran it on the GPU on a
    # copy for the prompt's rows (LLAMACPP_OUTPUT_OFFLOAD): 18 blocks either way, -ngl 19 with the output layer
    assert (offload["cpu_layers"], offload["total_layers"]) == (62, 80) and "--gpu-layers=19" in \
        deployment["backend_parameters"]
    # the host keeps 62 blocks and the embeddings, no longer the q6_K output (128,256 x 8,192 x 210 / 256 B =
    # 861,880,320 less than the 32,958,893,936 of older builds)
    assert offload["cpu_weight_bytes"] == 32_097_013_616 and offload["decode_slowdown_estimate"] == 10.44
    assert offload["explanation"].startswith("offload: 62 of 80 layers on the CPU (29.89 GiB of weights in host "
                                             "memory); estimated 10.4x slower decoding than all layers on the GPU")
    text = gsg("advise", "-m", GGUF, "--backend", "llama.cpp", "--fleet", str(FLEET), "--gpus", "gpu-d:cuda:1",
               "-w", CHAT).out
    assert "\n    offload: 62 of 80 layers on the CPU" in text and "it keeps layers on the CPU" in text


def test_llamacpp_prefers_every_layer_on_the_gpu_to_serving_the_peak_offloaded(gsg, tmp_path):
    docs = workload_file(tmp_path, "docs", (4000, 7000, 7192), (500, 900, 1000), 16)
    _, doc = advise_json(gsg, "-m", GGUF, "--backend", "llama.cpp", "--fleet", str(FLEET), "--gpus",
                         "gpu-d:cuda:0", "-w", docs)
    deployment = doc["options"][0]["deployments"][0]
    assert deployment["offload"] is None and "--gpu-layers=999" in deployment["backend_parameters"]
    assert deployment["max_num_seqs"] == 5 and doc["workloads"]["docs"]["queued_at_peak"] == 11
    # 47 blocks beside the output layer, which -ngl takes first (profiles.LLAMACPP_OUTPUT_FIRST_SINCE)
    assert deployment["kv_cache_dtype_reason"] == ("q8_0 KV because with f16 at 16 slots only 47 of 80 layers fit "
                                                   "on the GPUs; q8_0 keeps every layer there with 5 slots")
    assert doc["would_fit"][0].startswith("add 1 GPU of 47.99 GiB (2 in all): it holds every workload's peak")


def test_ttft_targets_per_option_and_the_pool_that_meets_them(gsg, rag):
    result, doc = advise_json(gsg, "-m", LLAMA_8B, "--fleet", str(FLEET), "--gpus", GPU_A, "--backend-version",
                              "0.11.0", "-w", CHAT, "-w", BATCH, "-w", rag)
    assert result.code == 0
    options = {o["kind"]: o for o in doc["options"]}
    assert list(options) == ["shared", "shared-with-priority", "separate", "grouped"]
    # one pool: a 31,000-token document prefilling ahead delays chat's first token past its 1 s target
    assert options["shared"]["slos"]["chat"] == {"ttft_slo_s": 1.0, "ttft_estimate_s": 1.7, "meets": False}
    assert options["shared"]["meets_slos"] == ["rag"]
    assert options["separate"]["meets_slos"] == ["chat", "rag"]
    assert options["grouped"]["meets_slos"] == ["chat"]  # rag shares its pool with the batch documents
    assert [d["workloads"] for d in options["grouped"]["deployments"]] == [["chat"], ["rag", "nightly-batch"]]
    assert doc["decision"] == "separate" and doc["reason"].startswith(
        "separate pools: the shared pool misses a TTFT target: chat's estimated time to first token 1.70 s misses "
        "its 1 s target")


def test_a_gpu_without_compute_figures_gets_no_ttft_guess(gsg):
    _, doc = advise_json(gsg, "-m", LLAMA_8B, "--gpu-memory", "48GiB", "--gpus", "1", "-w", CHAT)
    assert doc["options"][0]["slos"] == {"chat": {"ttft_slo_s": 1.0, "ttft_estimate_s": None, "meets": None}}
    assert doc["options"][0]["meets_slos"] == []


def test_replicas_when_tensor_parallel_cannot_split_the_heads(gsg):
    # 32 attention heads do not split three ways: three replicas of one GPU each, not a three-stage pipeline
    _, doc = advise_json(gsg, "-m", LLAMA_8B, "--gpu-memory", "48GiB", "--gpus", "3", "-w", CHAT)
    deployment = doc["options"][0]["deployments"][0]
    assert (deployment["replicas"], deployment["tensor_parallel_size"], deployment["pipeline_parallel_size"]) == \
        (3, 1, 1)
    assert deployment["spec"]["replicas"] == 3 and deployment["spec"]["gpu_selector"]["gpus_per_replica"] == 1
    assert deployment["max_num_seqs_total"] >= 48 and deployment["serves_peak"] is True


def test_too_many_workloads_is_one_line(gsg, tmp_path):
    files = [a for i in range(9) for a in ("-w", workload_file(tmp_path, f"w{i}", (10, 10, 10), (5, 5, 5), 1))]
    result = gsg("advise", "-m", LLAMA_8B, "--gpu-memory", "48GiB", "--gpus", "2", *files)
    assert result.code == 1 and result.err == ("gsg: error: --workload: 9 workloads: advise compares at most 8 (the "
                                               "groupings it tries double with each one); advise a subset at a time\n")
