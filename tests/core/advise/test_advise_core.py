"""The pure advisor: length rounding, layouts, the mix's p95, GPU splits, who runs at the joint peak, and the
documents it hands the pipeline (valid specs, built in memory)."""

import pytest

from gpustack_guard.core.advise.candidates import InMemoryDocument, Judged, Target, document, hypothetical_fleet
from gpustack_guard.core.advise.compare import PRIORITY, SHARED, _option, _splits, batch_room
from gpustack_guard.core.advise.sizing import Sizing, block_round, layouts, mixed_p95_tokens
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.memory.estimate import Estimate
from gpustack_guard.core.spec.check import SpecDoc, check_document


def workload(name, prompt95, output95, concurrency, pattern="steady"):
    return Workload.validate({"name": name, "prompt_tokens": {"p50": 1, "p95": prompt95, "p99": prompt95 + 100},
                              "output_tokens": {"p50": 1, "p95": output95, "p99": output95 + 100},
                              "concurrency": concurrency, "pattern": pattern})


CHAT = workload("chat", 1500, 600, 48)
BATCH = workload("batch", 30000, 1000, 2, "batch")


def estimate(capacity, seqs):
    zero = dict.fromkeys(("gpu_total", "gpus", "requested", "weights", "activation", "non_torch", "cuda_graphs",
                          "kv_cache", "kv_available", "headroom", "headroom_needed", "footprint", "kv_bytes_per_token",
                          "block_size", "max_model_len", "estimated_max_model_len"), 0)
    return Estimate(engine="vllm", version="0.11.0", kv_capacity_tokens=capacity, max_num_seqs=seqs,
                    max_concurrency=0.0, verdict="fits", **zero)


def sized(capacity, seqs, workloads):
    return Sizing("pool", workloads, ("w:cuda:0",), Judged({"name": "pool", "backend": "vLLM"},
                                                           estimate(capacity, seqs)))


def test_lengths_round_up_to_whole_kv_blocks():
    assert [block_round(n) for n in (1, 16, 17, 32500, 3500)] == [16, 16, 32, 32512, 3504]


def test_layouts_use_every_gpu_tensor_parallel_first():
    assert layouts(4) == [(4, 1), (2, 2), (1, 4)]
    assert layouts(3) == [(3, 1), (1, 3)]
    assert layouts(1) == [(1, 1)]


def test_the_mix_p95_is_weighted_by_requests_in_flight():
    assert mixed_p95_tokens((CHAT, BATCH)) == -(-(48 * 2100 + 2 * 31000) // 50) == 3256


def test_gpu_splits_for_separate_pools():
    rag = workload("rag", 7000, 800, 16)
    assert _splits(4, ((CHAT,), (BATCH,))) == [(1, 3), (2, 2), (3, 1)]
    # KV demand at p99: chat 48 x 2,300 = 110,400, batch 2 x 31,200 = 62,400, rag 16 x 8,000 = 128,000
    assert _splits(5, ((CHAT,), (BATCH,), (rag,))) == [(2, 1, 2)]  # remainders to KV demand
    assert _splits(1, ((CHAT,), (BATCH,))) == []


def test_grouped_pools_split_spare_gpus_by_each_pools_whole_demand():
    """A pool's demand is every workload's in it, not its first one's: a light first workload must not send the
    spare GPU to a pool that needs less."""
    tiny = workload("tiny", 100, 10, 1)  # 1 x 310 tokens
    rag = workload("rag", 7000, 800, 16)  # 128,000
    summary = workload("summary", 2000, 500, 40)  # 40 x 2,700 = 108,000
    groups = ((tiny, rag), (summary,), (CHAT,))  # 128,310 against 108,000 and 110,400
    assert _splits(4, groups) == [(2, 1, 1)]
    assert _splits(5, groups) == [(2, 1, 2)]  # two spare: the two heaviest pools
    assert _splits(4, ((tiny,), (summary,), (CHAT,))) == [(1, 1, 2)]  # the near miss: tiny alone is the lightest


def test_a_pool_that_holds_the_joint_peak_runs_everyone():
    option = _option(SHARED, (sized(249_056, 50, (CHAT, BATCH)),), (CHAT, BATCH))
    assert [(s.workload.name, s.at_peak, s.queued, s.alone) for s in option.shares] == \
        [("chat", 48, 0, 50), ("batch", 2, 0, 7)]  # 249,056 // 31,200 (batch at p99) = 7 alone
    assert option.serves_peak and option.queueing.endswith("nothing queues")


def test_priority_fills_the_pool_with_interactive_requests_first():
    small = sized(120_000, 50, (CHAT, BATCH))  # 48 x 2,300 (p99) = 110,400 for chat leaves 9,600: no batch doc
    fcfs = _option(SHARED, (small,), (CHAT, BATCH))
    ranked = _option(PRIORITY, (small,), (CHAT, BATCH))
    assert [(s.at_peak, s.queued) for s in fcfs.shares] == [(33, 15), (1, 1)]  # 120,000 / 172,800 of each
    assert [(s.at_peak, s.queued) for s in ranked.shares] == [(48, 0), (0, 2)]
    assert batch_room(ranked.shares) == {"batch": 0}
    assert ranked.queueing.endswith("the batch side holds the queue: cap its client at what fits beside the "
                                    "interactive peak — batch: none fits beside that peak, it runs only while the "
                                    "interactive side is quieter")
    roomy = _option(PRIORITY, (sized(200_000, 50, (CHAT, BATCH)),), (CHAT, BATCH))
    assert batch_room(roomy.shares) == {"batch": 2} and roomy.queueing.endswith("batch at 2 in flight (it sends 2)")


@pytest.mark.parametrize("family, params", [
    ("vllm", ["--max-model-len=4096"]), ("sglang", ["--context-length=4096"]), ("llamacpp", ["--ctx-size=4096"]),
])
def test_candidate_documents_are_specs_the_checker_accepts(family, params):
    target = Target("meta-llama/Llama-3.1-8B-Instruct", family, "0.11.0", ("w:cuda:0",), 48 * 1024**3,
                    gguf_file="x-Q4_K_M.gguf" if family == "llamacpp" else None,
                    facts_catalog="meta-llama/Llama-3.1-8B-Instruct")
    doc = document(target, "chat-pool", ("w:cuda:0",), params, (CHAT,))
    assert doc["guard"] == {"workload": {"prompt_tokens_p99": 1600, "max_output_tokens": 700, "concurrency": 48},
                            "model": {"catalog": "meta-llama/Llama-3.1-8B-Instruct"}}
    spec_doc = SpecDoc("(advise) chat-pool", 0, InMemoryDocument(doc))
    checked, problems = check_document(spec_doc)
    assert problems == [] and checked.spec is not None
    assert checked.spec.backend == target.backend


def test_a_hypothetical_fleet_is_made_of_the_smallest_gpu():
    target = Target("m", "vllm", None, ("a:cuda:0",), 24 * 1024**3, gpu_name="NVIDIA GeForce RTX 4090")
    fleet, ids = hypothetical_fleet(target, 3)
    assert ids == ("hypothetical:cuda:0", "hypothetical:cuda:1", "hypothetical:cuda:2")
    gpus = fleet.clusters[0].workers[0].gpus
    assert [(g.name, g.memory.total) for g in gpus] == [("NVIDIA GeForce RTX 4090", 24 * 1024**3)] * 3


def test_shapes_are_every_layout_then_replicas_of_narrower_ones():
    from gpustack_guard.core.advise.sizing import shapes

    assert shapes(4) == [(4, 1, 1), (2, 2, 1), (1, 4, 1), (2, 1, 2), (1, 2, 2), (1, 1, 4)]
    assert len(shapes(8)) == 10 and shapes(1) == [(1, 1, 1)]
    assert max(r for _, _, r in shapes(16)) == 8  # MAX_REPLICAS


def test_groupings_cut_the_length_sorted_workloads_into_consecutive_pools():
    from gpustack_guard.core.advise.compare import MAX_GROUPINGS, groupings

    rag = workload("rag", 7000, 800, 16)
    names = [tuple(tuple(w.name for w in g) for g in groups) for groups in groupings((CHAT, BATCH, rag), 4)]
    assert names == [(("chat",), ("rag", "batch")), (("chat", "rag"), ("batch",))]
    assert groupings((CHAT, BATCH, rag), 1) == []  # a pool needs a GPU
    many = tuple(workload(f"w{i}", 100 * (i + 1), 10, 1) for i in range(8))
    assert len(groupings(many, 8)) == MAX_GROUPINGS  # 2^7 - 2 cuts, bounded


def test_prefill_interference_is_the_longest_prompt_ahead_at_the_step_budget():
    from gpustack_guard.core.advise.latency import StepCost, gpu_speed

    step = StepCost(budget=2048, compute_per_token=1e-4, weight_read=0.05)
    # 48 decodes leave 2,000 prefill tokens a step; 32,500 tokens ahead take 17 steps of max(0.2048, 0.05) s
    assert step.prefill_seconds(32_500, 48) == pytest.approx(17 * 0.2048)
    assert step.prefill_seconds(3_000, 48) == pytest.approx(2 * 0.2048)
    assert gpu_speed("NVIDIA RTX A6000").bandwidth == 0.768e12 and gpu_speed("NVIDIA A100-SXM4-40GB") is not None
    assert gpu_speed("NVIDIA A10").flops == 125e12 and gpu_speed("NVIDIA A100 80GB PCIe").flops == 312e12
    assert gpu_speed("Some Unknown GPU") is None
