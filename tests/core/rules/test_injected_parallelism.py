"""The worker's injected parallel sizes reach the arithmetic; replicas 0 books nothing; gpu_ids vs TP x PP."""

from rule_inputs import fleet, gpu, run_stages, vllm, worker

from gpustack_guard.core.rules import placement as P
from gpustack_guard.core.rules.registry import RULES

FOUR = fleet(worker("w1", gpu(0), gpu(1), gpu(2), gpu(3)), worker("w2", gpu(0), gpu(1)))
ARGS = ("--max-model-len=8192", "--max-num-seqs=16")


def only(run):
    return run.results.evaluations[0]


def all_findings(run):
    return [f for rule in RULES.values() if rule.check for f in rule.check(run.results)] + run.stage_findings


def test_two_selected_gpus_run_at_tp_2():
    ev = only(run_stages(vllm("a", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1"]), fleet=FOUR))
    assert ev.flags["tensor-parallel-size"] == "2"
    single = only(run_stages(vllm("a", *ARGS, gpu_ids=["w1:cuda:0"]), fleet=FOUR))
    assert "tensor-parallel-size" not in single.flags
    # about half the weights per GPU at TP 2 (embeddings and heads split too), so a larger KV pool per GPU
    assert 0.49 < ev.estimate.weights / single.estimate.weights < 0.52
    assert ev.estimate.kv_available > single.estimate.kv_available


def test_four_gpus_tp_4_and_the_spec_tp_wins():
    ev = only(run_stages(vllm("a", *ARGS, gpu_ids=[f"w1:cuda:{i}" for i in range(4)]), fleet=FOUR))
    assert ev.flags["tensor-parallel-size"] == "4"
    assert [a.render() for a in ev.placed.injections[0].arguments][:2] == [
        "--tensor-parallel-size=4", "--enable-prompt-tokens-details"]
    given = only(run_stages(vllm("a", "--tensor-parallel-size=2", "--pipeline-parallel-size=2", *ARGS,
                                 gpu_ids=[f"w1:cuda:{i}" for i in range(4)]), fleet=FOUR))
    assert given.flags["tensor-parallel-size"] == "2" and given.flags["pipeline-parallel-size"] == "2"
    assert given.placed.injections[0].flags() == {}


def test_multi_worker_gets_tp_and_pp_from_the_workers():
    ev = only(run_stages(vllm("a", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1", "w2:cuda:0", "w2:cuda:1"]),
                         fleet=FOUR))
    assert ev.placed.injections[0].flags() == {"tensor-parallel-size": "2", "pipeline-parallel-size": "2"}
    assert [g.id for g in ev.placement.replicas[0]] == ["w1:cuda:0", "w1:cuda:1", "w2:cuda:0", "w2:cuda:1"]


def test_three_gpus_for_tp_2_is_gsg022_at_the_flag():
    run = run_stages(vllm("a", "--tensor-parallel-size=2", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1", "w1:cuda:2"]),
                     fleet=FOUR)
    [found] = run.findings(P.PARALLEL_SIZE)
    assert str(found.location) == "spec.yaml:7:3"  # backend_parameters[0]
    assert found.message == (
        "gpu_ids lists 3 GPUs but 1 replica(s) use 2: --tensor-parallel-size 2 x --pipeline-parallel-size 1 = 2 GPUs "
        "per replica. GPUStack does not reject this: it sets gpus_per_replica to 2 and leaves w1:cuda:2 idle")
    assert found.fix == "list 2 gpu_ids, or set the parallel size to use all 3"


def test_three_gpus_without_tp_run_two_and_say_so():
    run = run_stages(vllm("a", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1", "w1:cuda:2"]), fleet=FOUR)
    assert only(run).flags["tensor-parallel-size"] == "2"
    [found] = run.findings(P.PARALLEL_SIZE)
    assert str(found.location) == "spec.yaml:4:3"
    assert "no parallel size is set, so GPUStack runs 2 GPU(s) per replica (the largest power of two <= 3 / 1)" \
        in found.message


def test_matching_counts_are_clean():
    for docs in ([vllm("a", "--tensor-parallel-size=2", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1"])],
                 [vllm("a", "--tensor-parallel-size=2", *ARGS, replicas=2,
                       gpu_ids=["w1:cuda:0", "w1:cuda:1", "w1:cuda:2", "w1:cuda:3"])]):
        assert run_stages(*docs, fleet=FOUR).findings(P.PARALLEL_SIZE) == []


def test_skip_env_keeps_every_selected_gpu():
    run = run_stages(vllm("a", "--tensor-parallel-size=2", *ARGS, gpu_ids=["w1:cuda:0", "w1:cuda:1", "w1:cuda:2"],
                          env={"GPUSTACK_SKIP_GPU_COUNT_CHECK": "1"}), fleet=FOUR)
    assert len(only(run).placement.replicas[0]) == 3 and run.findings(P.PARALLEL_SIZE) == []


def test_parked_specs_book_nothing_and_report_nothing():
    parked = [vllm(f"p{i}", gpu_ids=["w2:cuda:0"], replicas=0) for i in range(200)]
    run = run_stages(*parked, vllm("live", *ARGS, gpu_ids=["w2:cuda:0"]), fleet=FOUR)
    assert all(ev.placed.parked and ev.placement is None and ev.estimates == ()
               for ev in run.results.evaluations[:200])
    assert run.results.ledgers["prod"].bookings["w2:cuda:0"] == int(gpu(0)["memory"]["total"] * 0.9)
    assert [f.rule.id for f in all_findings(run)] == []


def test_parked_spec_with_an_unknown_gpu_still_says_so():
    run = run_stages(vllm("p", gpu_ids=["w9:cuda:0"], replicas=0), fleet=FOUR)
    assert [f.rule.id for f in all_findings(run)] == ["GSG020"]
