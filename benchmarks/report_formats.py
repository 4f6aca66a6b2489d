"""Report formats at scale: `gsg validate -o FORMAT` on scale.py's generated tree, each beside `-o text`.

Issue 34: at 10,000 specs x 5,000 GPUs `-o json` writes ~100 MB and took 8x the text output (the indenting
encoder is pure Python; the secret scrub and terminal_safe ran over the whole text). Prints the median wall and
CPU time of each format, runs interleaved with text's (the baseline), and the ratio; target: json <= 2x text.

    python benchmarks/report_formats.py [--specs 10000] [--gpus 5000] [--runs 3] [--formats json,sarif]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from scale import write_tree
from timing import byte_compile_gsg, median_runs_cpu, versus_line

TARGET = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", type=int, default=10_000)
    parser.add_argument("--gpus", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", default="json,sarif")
    opts = parser.parse_args()
    byte_compile_gsg()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        write_tree(base, opts.specs, opts.gpus)
        formats = ["text"] + [f for f in opts.formats.split(",") if f and f != "text"]
        outputs = {f: base / f"out.{f}" for f in formats}
        commands = [[sys.executable, "-c", "import sys; from gpustack_guard.__main__ import entry; "
                     f"sys.argv[0] = 'gsg'; sys.stdout = open({str(outputs[f])!r}, 'w'); entry()",
                     "validate", str(base / "specs"), "--fleet", str(base / "fleet.yaml"), "--offline", "-o", f]
                    for f in formats]
        results = median_runs_cpu(commands, opts.runs)
        (text_wall, text_cpu, _), rows = results[0], results[1:]
        print(f"{opts.specs} specs, {opts.gpus} GPUs; text output {outputs['text'].stat().st_size:,} bytes")
        for fmt, (wall, cpu, done) in zip(formats[1:], rows):
            if done.returncode not in (0, 1):
                print(done.stderr, file=sys.stderr)
                return 2
            print(f"-o {fmt}: {outputs[fmt].stat().st_size:,} bytes")
            print(versus_line(f"  wall (median of {opts.runs})", wall, "-o text", text_wall, TARGET))
            print(versus_line(f"  CPU (median of {opts.runs})", cpu, "-o text", text_cpu, TARGET))
    return 0


if __name__ == "__main__":
    sys.exit(main())
