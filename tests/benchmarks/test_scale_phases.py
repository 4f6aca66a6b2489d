"""benchmarks/scale.py's phase line: one in-process run of a small generated tree, CPU per phase, the phases
adding up to the whole run, with the results kept to the process's end as the gsg process keeps them (freeing
them is time the command never spends)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_phase_line_names_every_phase_and_they_add_up(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # scale.py imports its sibling timing.py
    monkeypatch.delitem(sys.modules, "scale", raising=False)
    import scale

    specs, _ = scale.write_tree(tmp_path, 6, 8)
    line = scale.phase_line(specs, tmp_path / "fleet.yaml")
    found = re.fullmatch(r"  in-process phases, ms CPU of one run: load_specs (\d+), load_fleet (\d+), "
                         r"render_all (\d+), evaluate (\d+), run_rules (\d+), report and the rest (-?\d+) "
                         r"\(of (\d+), results kept to the end as gsg keeps them\)", line)
    assert found, line
    *parts, total = (int(n) for n in found.groups())
    assert abs(sum(parts) - total) <= len(parts)  # each figure rounded to the millisecond
