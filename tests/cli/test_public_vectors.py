"""Public vLLM start-up logs turned into vectors with `gsg verify --log`'s rebuild: every verdict right, KV capacity
within ±10 % wherever the version is known, and the ±5 % share held as a floor (issue 32's target is 90 %).
The table is printed (run the file alone, without xdist, to see it); benchmarks/vectors/MISSES.md diagnoses every row outside ±5 %."""

from __future__ import annotations

import pytest
from support import public_vectors as PV

# Scored rows outside ±10 % today, each diagnosed in benchmarks/vectors/MISSES.md. The memory arithmetic is being
# changed elsewhere: a fix shows up as this set shrinking (then drop the name), a regression as it growing.
KNOWN_OUTSIDE_10 = {"v1-0.8.5-llama31-8b-l40s.log"}
# Scored rows within ±5 % today, as a share of the scored rows: it may rise, never fall.
FLOOR_WITHIN_5 = 2 / 3


@pytest.fixture(scope="module")
def outcomes() -> list[PV.Outcome]:
    return [PV.run(vector) for vector in PV.VECTORS]


pytestmark = pytest.mark.xdist_group("public-vectors")  # the module-scoped outcomes are computed once


def test_every_vector_is_rebuilt_from_its_log(outcomes):
    assert [o.problem for o in outcomes] == [None] * len(PV.VECTORS)
    assert len({v.log for v in PV.VECTORS}) == len(PV.VECTORS)
    for o in outcomes:
        assert (PV.LOGS / o.vector.log).is_file(), o.vector.log
        assert o.vector.why, o.vector.log


def test_every_verdict_is_the_engines(outcomes):
    wrong = [(o.vector.log, o.observed_verdict, o.estimated_verdict) for o in outcomes if not o.verdict_right]
    assert wrong == []


def test_kv_capacity_within_ten_percent_wherever_the_version_is_known(outcomes):
    outside = {o.vector.log for o in outcomes if o.kv_scored and abs(o.delta or 0) > PV.KV_SCORED}
    assert outside == KNOWN_OUTSIDE_10


def test_the_table_is_printed_and_the_five_percent_share_does_not_fall(outcomes, capsys):
    text = PV.table(outcomes)
    with capsys.disabled():  # the table is the report: shown on the terminal, not kept for a failure
        print("\n" + text)
    assert len(text.splitlines()) == len(outcomes) + 3  # head, rule, one line each, summary
    scored = [o for o in outcomes if o.kv_scored]
    within = [o for o in scored if abs(o.delta or 0) <= PV.KV_TARGET]
    assert len(scored) >= 3
    assert len(within) / len(scored) >= FLOOR_WITHIN_5, text


def test_a_row_shows_its_numbers_and_an_unscored_delta_is_starred(outcomes):
    lines = PV.table(outcomes).splitlines()
    first = next(line for line in lines if line.startswith("v0.6.4-llama31-8b-rtx3090-20k.log"))
    assert first.split()[-7:] == ["31,232", "31,472", "+0.8", "%", "fits", "/", "fits"]
    refused = next(line for line in lines if line.startswith("v0.6.4-llama31-8b-rtx3090-29k-refused.log"))
    assert "+3.0 %*" in refused and refused.endswith("kv-below-max-model-len / kv-below-max-model-len")
    assert lines[-1].startswith(f"verdicts right: {len(outcomes)}/{len(outcomes)}; KV capacity within ±5%: ")


def test_every_row_outside_five_percent_is_diagnosed(outcomes):
    misses = (PV.ROOT / "benchmarks" / "vectors" / "MISSES.md").read_text(encoding="utf-8")
    for o in outcomes:
        if o.delta is not None and abs(o.delta) > PV.KV_TARGET:
            assert f"`{o.vector.log}`" in misses, o.vector.log
