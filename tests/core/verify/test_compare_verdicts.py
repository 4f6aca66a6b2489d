"""How an engine's own start-up verdict is matched by the estimate's (core/verify/compare.py)."""

import pytest

from gpustack_guard.core.verify import compare as C


@pytest.mark.parametrize("failure,verdict", [("out-of-memory", "does-not-fit"),
                                             ("out-of-memory-warming-up-sampler", "sampler-warmup-oom"),
                                             ("kv-below-max-model-len", "kv-below-max-model-len")])
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
    (None, "fits", False),
])
def test_a_bare_start_up_oom_agrees_with_every_start_up_memory_death_and_nothing_else(observed, estimated, agree):
    assert C.verdicts_agree(observed, estimated) is agree
