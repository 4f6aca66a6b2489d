"""The soak report's memory column shows one source for every row: the verdict's (the best signal every judged
round has), for warm-up, other sweep steps and the reference too. Choosing a source reads the rounds and
changes none of them, so each sweep step's own verdict cannot leave its choice behind in the table."""

from __future__ import annotations

import json

from gpustack_guard.adapters.soak.runner import SoakProgress
from gpustack_guard.commands.soak import SoakOptions, _plan, build_report
from gpustack_guard.core.soak.load_model import StepOutcome
from gpustack_guard.core.soak.rounds import RoundStats, choose_memory_source, memory_column
from gpustack_guard.reporters.soak import render_json

GIB = 1024 ** 3
# each source's figures are apart, so a row's value says which source it came from
BASE = {"pid_rss": 1 * GIB, "process_resident": 2 * GIB, "gpu_used": 3 * GIB}


def _round(index: int, sources: tuple[str, ...], *, warmup: bool = False, step: float | None = None) -> RoundStats:
    r = RoundStats(index=index, started_s=index * 2.0, seconds=1.0, requests=10, errors=0, error_reasons={},
                   ttft_p50_s=0.1, ttft_p95_s=0.2, itl_p50_s=0.01, itl_p95_s=0.02, output_tokens_per_s=50.0,
                   warmup=warmup, step=step)
    r.memory = {s: BASE[s] + index for s in sources}
    r.idle_memory = {s: BASE[s] + 500 + index for s in sources}
    return r


def _source_of(value: float | None) -> str | None:
    return None if value is None else next(s for s, base in BASE.items() if base <= value < base + 1000)


def _shown(report) -> list[str | None]:
    return [_source_of(r.memory_bytes) for r in report.rounds + report.reference_rounds] + \
        [_source_of(r.idle_memory_bytes) for r in report.rounds + report.reference_rounds]


def test_a_warm_up_round_without_the_verdicts_source_shows_none_rather_than_another():
    opts = SoakOptions(url="http://127.0.0.1:9/v1", model="m", rounds=3, warmup_rounds=1)
    progress = SoakProgress(rounds=[_round(0, ("gpu_used",), warmup=True)] +
                            [_round(i, ("pid_rss", "gpu_used")) for i in (1, 2, 3)])
    report = build_report(opts, _plan(opts), progress)
    assert report.verdict.memory_source == "pid_rss"
    assert [r.memory_bytes for r in report.rounds] == [None, GIB + 1, GIB + 2, GIB + 3]
    assert [r.idle_memory_bytes for r in report.rounds] == [None, GIB + 501, GIB + 502, GIB + 503]
    assert [r["memory_bytes"] for r in json.loads(render_json(report))["rounds"]] == [None, GIB + 1, GIB + 2,
                                                                                       GIB + 3]
    assert [r.memory_bytes for r in progress.rounds] == [None] * 4  # the measured rounds are left as they were


def test_a_sweep_report_shows_one_source_after_each_steps_own_verdict():
    opts = SoakOptions(url="http://127.0.0.1:9/v1", model="m", rounds=2, sweep="concurrency:4,8")
    # the lighter step has the RSS of --pid, the heavier one lost it: each step's verdict chooses its own source
    rounds = [_round(0, ("pid_rss", "gpu_used"), step=4), _round(1, ("pid_rss", "gpu_used"), step=4),
              _round(2, ("gpu_used",), step=8), _round(3, ("gpu_used",), step=8)]
    progress = SoakProgress(rounds=rounds, steps=[StepOutcome(4, True, [], None), StepOutcome(8, True, [], None)])
    report = build_report(opts, _plan(opts), progress)
    assert report.sweep["best"] == 8 and report.verdict.memory_source == "gpu_used"
    assert _shown(report) == ["gpu_used"] * 8
    light = build_report(opts, _plan(opts), SoakProgress(rounds=rounds, steps=[StepOutcome(4, True, [], None),
                                                                               StepOutcome(8, False, ["x"], None)]))
    assert light.sweep["best"] == 4 and light.verdict.memory_source == "pid_rss"
    assert _shown(light) == ["pid_rss", "pid_rss", None, None] * 2


def test_the_reference_rows_show_our_source_or_none():
    opts = SoakOptions(url="http://127.0.0.1:9/v1", model="m", rounds=2, reference_url="http://127.0.0.1:8/v1")
    progress = SoakProgress(rounds=[_round(i, ("process_resident", "gpu_used")) for i in (0, 1)],
                            reference=[_round(i, ("gpu_used",)) for i in (0, 1)])
    report = build_report(opts, _plan(opts), progress)
    assert report.verdict.memory_source == "process_resident"
    assert _shown(report) == ["process_resident", "process_resident", None, None] * 2
    both = SoakProgress(rounds=progress.rounds, reference=[_round(i, ("process_resident",)) for i in (0, 1)])
    assert _shown(build_report(opts, _plan(opts), both)) == ["process_resident"] * 8  # the near miss


def test_choosing_a_source_changes_no_round():
    rounds = [_round(0, ("pid_rss", "gpu_used")), _round(1, ("gpu_used",))]
    assert choose_memory_source(rounds) == "gpu_used" and choose_memory_source(rounds[:1]) == "pid_rss"
    assert choose_memory_source([]) is None and choose_memory_source([_round(0, ())]) is None
    assert [r.memory_bytes for r in rounds] == [None, None]
    assert [r.memory_bytes for r in memory_column(rounds, "pid_rss")] == [GIB, None]
    assert [r.memory_bytes for r in memory_column(rounds, None)] == [None, None]
