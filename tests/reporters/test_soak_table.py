"""`gsg soak`'s text table: p50/p95/p99 of TTFT and inter-token latency, end-to-end p95 while the row fits
TABLE_WIDTH, the reference's columns kept aligned when a round has no reference row, and the HTML table with
every column."""

from __future__ import annotations

from gpustack_guard.core.soak.rounds import RoundStats
from gpustack_guard.core.soak.verdict import Verdict
from gpustack_guard.reporters.soak import (
    TABLE_WIDTH,
    SoakReport,
    render_html,
    render_text,
    table_columns,
    table_header,
    table_row,
)

GIB = 1024 ** 3


def _round(index: int, ttft: float, warmup: bool = False) -> RoundStats:
    return RoundStats(index=index, started_s=2.0 * index, seconds=2.0, requests=40, errors=1, error_reasons={},
                      ttft_p50_s=ttft, ttft_p95_s=ttft * 2, ttft_p99_s=ttft * 3, itl_p50_s=0.0125,
                      itl_p95_s=0.025, itl_p99_s=0.0875, e2e_p95_s=1.5, output_tokens_per_s=123.45,
                      kv_usage_max=0.91, preemptions=2, memory_bytes=9.5 * GIB, idle_memory_bytes=9.25 * GIB,
                      warmup=warmup)


def _report(rounds: list[RoundStats], reference: list[RoundStats] | None = None) -> SoakReport:
    settings = {"concurrency": 8, "rounds": len(rounds), "round_seconds": 2, "seed": 0, "workload": []}
    return SoakReport("http://127.0.0.1:8000", "qwen3-8b", settings, rounds, Verdict("stable"),
                      reference_url="http://127.0.0.1:8001" if reference else None,
                      reference_rounds=reference or [])


HEADER = ("round  requests  errors   TTFT p50   TTFT p95   TTFT p99   ITL p50   ITL p95   ITL p99    e2e p95     "
          "tok/s  KV max  preempt     memory   idle mem")
ROW = ("    1        40       1    0.100 s    0.200 s    0.300 s   12.5 ms   25.0 ms   87.5 ms    1.500 s     "
       "123.5     91%        2   9.50 GiB   9.25 GiB")


def test_the_table_has_p99_of_ttft_and_itl_and_e2e_p95_within_the_width():
    assert table_header() == HEADER
    assert table_row(_round(0, 0.1)) == ROW
    assert len(HEADER) == len(ROW) == 146 <= TABLE_WIDTH


def test_beside_a_reference_the_optional_e2e_column_gives_way_to_stay_within_the_width():
    header = table_header(with_reference=True)
    assert header == ("round  requests  errors   TTFT p50   TTFT p95   TTFT p99   ITL p50   ITL p95   ITL p99     "
                      "tok/s  KV max  preempt     memory   idle mem    ref p50    ref p95")
    assert len(header) == 157 <= TABLE_WIDTH
    assert "e2e p95" not in [c.heading for c in table_columns(with_reference=True)]
    row = table_row(_round(0, 0.1), _round(0, 0.05))
    assert row.endswith("   9.50 GiB   9.25 GiB    0.050 s    0.100 s") and len(row) == len(header)


def test_a_round_the_reference_did_not_answer_keeps_the_reference_columns_blank_and_aligned():
    text = render_text(_report([_round(0, 0.1), _round(1, 0.1)], reference=[_round(0, 0.05)]))
    lines = text.splitlines()
    assert lines[2].endswith("    0.050 s    0.100 s")
    assert lines[3].endswith("   9.25 GiB          -          -") and len(lines[3]) == len(lines[1]) == 157


def test_missing_percentiles_show_a_dash_in_their_own_column():
    empty = RoundStats(index=2, started_s=4.0, seconds=2.0, requests=0, errors=0, error_reasons={},
                       ttft_p50_s=None, ttft_p95_s=None, itl_p50_s=None, itl_p95_s=None, output_tokens_per_s=0.0,
                       warmup=True)
    assert table_row(empty) == ("   3w         0       0          -          -          -         -         -"
                                "         -          -       0.0       -        -          -          -")


def test_the_html_table_has_every_column_and_the_reference_s_beside_them():
    page = render_html(_report([_round(0, 0.1)], reference=[_round(0, 0.05)]))
    for heading in ("TTFT p99", "ITL p99", "e2e p95", "ref p95"):
        assert f"<th>{heading}</th>" in page
    assert "<td>0.300 s</td><td>12.5 ms</td><td>25.0 ms</td><td>87.5 ms</td><td>1.500 s</td>" in page
