"""validate runs its stages with the cyclic collector paused (docs/performance.md, fifth round): the pause is
there, it ends even when a stage fails, and the stages make no cyclic garbage that the pause would keep."""

import gc

import pytest
from support import FLEET, REPO

import gpustack_guard.commands.validate as command
from gpustack_guard.core.errors import GsgError


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_stages_run_with_the_collector_paused_and_it_runs_again_after(gsg, monkeypatch, collector_on):
    seen = []
    stages = command.validate

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return stages(*args, **kwargs)

    monkeypatch.setattr(command, "validate", watched)
    result = gsg("validate", str(REPO / "specs"), "--fleet", str(FLEET))
    assert result.code == 0, result.err
    assert seen == [False]
    assert gc.isenabled()


def test_a_stage_that_fails_leaves_the_collector_running(gsg, monkeypatch, collector_on):
    def failing(*_args, **_kwargs):
        raise GsgError("a stage stopped", where="specs/llama-8b.yaml")

    monkeypatch.setattr(command, "validate", failing)
    result = gsg("validate", str(REPO / "specs"), "--fleet", str(FLEET))
    assert (result.code, result.err.strip()) == (1, "gsg: error: specs/llama-8b.yaml: a stage stopped")
    assert gc.isenabled()


@pytest.mark.parametrize("folder", ["specs", "examples/positive", "examples/negative"])
def test_the_stages_leave_no_cyclic_garbage_for_the_pause_to_keep(gsg, monkeypatch, folder):
    # What the pause relies on: objects the stages drop are freed by their reference counts alone, refusals
    # of engine flags (GSG016) and Jinja's rendering included. The first run compiles each template once
    # (Jinja's compiler leaves some cycles, one set per template, not per spec); the second run is counted.
    found = []
    stages = command.validate

    def counted(*args, **kwargs):
        gc.collect()
        report = stages(*args, **kwargs)
        found.append(gc.collect())
        return report

    monkeypatch.setattr(command, "validate", counted)
    for _ in range(2):
        result = gsg("validate", str(REPO / folder), "--fleet", str(FLEET))
        assert result.code in (0, 1), result.err
    assert found[1] == 0


def test_a_refused_flag_value_comes_back_without_the_frames_that_raised_it():
    from gpustack_guard.core import engine_flags

    refusal = engine_flags.check("max-model-len", "lots", "vllm", "0.11.0")
    assert refusal is not None and refusal.__traceback__ is None and refusal.__context__ is None
    assert str(refusal) == ("--max-model-len 'lots': not a whole number; vLLM 0.11.0 (human_readable_int: "
                            "16k = 16,000, 16K = 16,384) accepts a whole number ≥ 1")
