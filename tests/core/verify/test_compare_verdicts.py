"""How an engine's own start-up verdict is matched by the estimate's (core/verify/compare.py)."""

import pytest

from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify.logparse import ObservedLog


@pytest.mark.parametrize("failure,verdict", [("out-of-memory", "does-not-fit"),
                                             ("out-of-memory-warming-up-sampler", "sampler-warmup-oom"),
                                             ("kv-below-max-model-len", "kv-below-max-model-len"),
                                             # a hybrid's state blocks below max_num_seqs (GSG056)
                                             ("mamba-blocks-below-max-num-seqs",
                                              "mamba-blocks-below-max-num-seqs")])
def test_each_failure_kind_is_named_as_the_estimate_names_it(failure, verdict):
    assert C.FAILURE_VERDICT[failure] == verdict


@pytest.mark.parametrize("observed,estimated,agree", [
    ("does-not-fit", "does-not-fit", True),
    ("does-not-fit", "sampler-warmup-oom", True),  # a bare OOM does not say where: the warm-up is one place
    ("sampler-warmup-oom", "sampler-warmup-oom", True),
    ("sampler-warmup-oom", "does-not-fit", False),  # the engine named the warm-up: loading is another place
    ("does-not-fit", "fits", False),
    ("does-not-fit", "kv-below-max-model-len", False),
    ("fits", "sampler-warmup-oom", False),
    # the refusal is no memory death: a bare OOM does not agree with it, nor it with a fit
    ("does-not-fit", "mamba-blocks-below-max-num-seqs", False),
    ("mamba-blocks-below-max-num-seqs", "fits", False),
    (None, "fits", False),
])
def test_a_bare_start_up_oom_agrees_with_every_start_up_memory_death_and_nothing_else(observed, estimated, agree):
    assert C.verdicts_agree(observed, estimated) is agree


@pytest.mark.parametrize("failure_kind,estimated,reason", [
    ("engine-error", "fits", "the engine crashed at start-up for a reason other than memory (line 31): no memory "
                             "verdict to hold the estimate's (fits) against"),
    ("engine-error", "does-not-fit", "the engine crashed at start-up for a reason other than memory (line 31): no "
                                     "memory verdict to hold the estimate's (does-not-fit) against"),
    ("out-of-memory", "fits", "the engine failed at start-up (out-of-memory), the estimate says fits"),
])
def test_a_crash_that_names_no_memory_is_not_held_against_the_estimate(failure_kind, estimated, reason):
    log = ObservedLog(engine="vllm", failure="AssertionError", failure_kind=failure_kind, failure_line=31)
    assert C.reasons(log, estimated, [], 5.0) == [reason]


def test_a_negative_logged_figure_keeps_the_percent_sign_of_the_estimate_against_it():
    # a graph capture that gave memory back logs a negative figure ("took -0.80 GiB"): an estimate above it is a
    # positive error, as against any positive figure; dividing by the signed figure flipped the sign
    gib = 2**30
    above = C.Delta("cuda_graphs_bytes_per_gpu", -int(0.8 * gib), int(0.2 * gib))
    assert (above.difference, above.percent) == (int(0.2 * gib) + int(0.8 * gib), 125.0)
    below = C.Delta("cuda_graphs_bytes_per_gpu", -gib, -2 * gib)
    assert below.percent == -100.0
    assert C.Delta("cuda_graphs_bytes_per_gpu", gib, 2 * gib).percent == 100.0
    assert C.Delta("cuda_graphs_bytes_per_gpu", 0, gib).percent is None
