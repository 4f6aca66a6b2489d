"""Hostile logs at full size: `gsg verify --log` on a ~300 MB log and on one 300 MB line (no newline), each in a
subprocess with gsg's default caps, against the acceptance bound of issue 33: one line, exit 1, within 20 s of
wall time and 256 MB of peak RSS (resource.getrusage of the children). The unit suite covers the same cases with
small caps (tests/cli/test_verify_hostile_logs.py); this script shows the defaults hold at full size. .ci/run
runs it; it writes ~600 MB into a temporary folder and removes it.

    python benchmarks/hostile_logs.py [--mb 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MiB = 1024**2
MAX_SECONDS = 20.0
MAX_RSS_BYTES = 256 * MiB
# access-log lines a long-running vLLM server prints after start-up, with a start-up line now and then that is
# a near miss (no figure): the parser's keyword filter sees many candidates, none of them a term
BLOCK = (b'INFO:     127.0.0.1:52814 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n' * 40
         + b"INFO 06-01 12:00:00 [loggers.py:116] Engine 000: Avg prompt throughput: 1.0 tokens/s, KV cache "
           b"usage: 3.1%, Prefix cache hit rate: 0.0%\n" * 10)


# vLLM's engine-config line, each copy different (the fuzzer's case, benchmarks/fuzz.py "log line repeated"): the
# costliest line to read, a dump of arguments; gsg reads one text once and at most MAX_ARGUMENT_DUMPS different ones
CONFIG_LINE = ("(EngineCore_0 pid=1159) INFO 09-10 23:26:51 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) "
               "with config: model='gpt-oss-120b', speculative_config=None, tokenizer='gpt-oss-120b', "
               "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, dtype=torch.bfloat16, "
               "max_seq_len={n}, download_dir=None, load_format=auto, tensor_parallel_size=4, "
               "pipeline_parallel_size=1, enforce_eager=False, kv_cache_dtype=auto, seed=0\n")


def write_config_lines(path: Path, size: int) -> None:
    with open(path, "w") as handle:
        written, n = 0, 0
        while written < size:
            block = "".join(CONFIG_LINE.format(n=n + i) for i in range(1000))
            handle.write(block)
            written, n = written + len(block), n + 1000


def write_entry_array(path: Path, size: int) -> None:
    """Grafana's JSON download of a long-running server: one line, one entry per access-log line, read whole."""
    entry = (b'{"line":"INFO:     127.0.0.1:52814 - \\"POST /v1/chat/completions HTTP/1.1\\" 200 OK",'
             b'"timestamp":"1761923269123456789","fields":{"app":"vllm","pod":"vllm-0"}}')
    block = b",".join([entry] * 1000)
    with open(path, "wb") as handle:
        handle.write(b"[")
        written = 0
        while written < size:
            handle.write((b"," if written else b"") + block)
            written += len(block) + 1
        handle.write(b"]\n")


def write_repeated(path: Path, chunk: bytes, size: int) -> None:
    block = chunk * max(1, MiB // len(chunk))
    with open(path, "wb") as handle:
        written = 0
        while written < size:
            handle.write(block)
            written += len(block)


def run_case(name: str, log: Path, report: bool = False) -> tuple[bool, str]:
    """`report`: the log is an engine's start-up (a report on stdout, exit 0 or 1) rather than no log at all."""
    began = time.monotonic()
    child = subprocess.Popen([sys.executable, "-m", "gpustack_guard", "verify", "--log", str(log)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "GSG_OFFLINE": "1"})
    try:
        out, err = child.communicate(timeout=MAX_SECONDS * 3)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return False, f"{name}: still running after {MAX_SECONDS * 3:.0f} s (killed)"
    seconds = time.monotonic() - began
    # communicate() reaped the child; its peak RSS is in the children's usage of this process, which ran
    # only this child since the previous case, so take the maximum over the cases and report each
    import resource

    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
    lines = err.decode("utf-8", "replace").strip().splitlines()
    if report:
        said = out.decode("utf-8", "replace").strip().splitlines()
        shaped = child.returncode in (0, 1) and bool(said) and not any("Traceback" in line for line in lines)
        shown = said[-1] if said else "nothing on stdout"
    else:
        shaped = child.returncode == 1 and len(lines) == 1 and lines[0].startswith("gsg: error: ") and not out
        shown = lines[0] if len(lines) == 1 else f"{len(lines)} lines on stderr"
    ok = shaped and seconds <= MAX_SECONDS and rss <= MAX_RSS_BYTES
    return ok, (f"{name}: exit {child.returncode}, {seconds:.1f} s (max {MAX_SECONDS:g}), peak RSS "
                f"{rss / MiB:.0f} MiB (max {MAX_RSS_BYTES // MiB}): {shown[:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=300, help="size of each generated log, in MiB")
    size = parser.parse_args().mb * MiB
    results = []
    with tempfile.TemporaryDirectory(prefix="gsg-hostile-logs-") as tmp:
        many = Path(tmp) / "many-lines.log"
        write_repeated(many, BLOCK, size)
        results.append(run_case(f"{size // MiB} MiB of lines", many))
        many.unlink()
        endless = Path(tmp) / "one-line.log"
        write_repeated(endless, b"Available KV cache memory: 1" + b"0" * 4096, size)  # never a newline
        results.append(run_case(f"one {size // MiB} MiB line", endless))
        endless.unlink()
        # a log that opens a JSON array of entries is read in one line up to the byte cap (Grafana's download)
        array = Path(tmp) / "entry-array.log"
        write_entry_array(array, min(size, 30 * MiB))  # under the 32 MiB cap: parsed whole
        results.append(run_case(f"a {min(size, 30 * MiB) // MiB} MiB JSON array of entries", array))
        write_repeated(array, b'[{"line":"' + b"x" * 4096, size)  # never closed, never a newline
        results.append(run_case(f"a {size // MiB} MiB JSON array never closed", array))
        array.unlink()
        configs = Path(tmp) / "config-lines.log"
        write_config_lines(configs, min(size, 40 * MiB))  # past the 32 MiB read cap: all of it is read first
        results.append(run_case(f"{min(size, 40 * MiB) // MiB} MiB of different engine-config lines", configs,
                                report=True))
    for ok, line in results:
        print(("ok    " if ok else "FAIL  ") + line)
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
