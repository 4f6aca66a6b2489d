"""benchmarks/soak_overhead.py's peer: finding GuideLLM in its own virtualenv, building the local tokenizer there,
the command it runs and reading TTFT p95 from its JSON, and the one line it prints when the peer cannot run.
A stand-in virtualenv of small scripts plays GuideLLM: nothing is installed or fetched."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "soak_overhead.py"


@pytest.fixture
def overhead():
    spec = importlib.util.spec_from_file_location("soak_overhead", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak_overhead"] = module  # its dataclass looks its module up while it is defined
    spec.loader.exec_module(module)
    yield module
    del sys.modules["soak_overhead"]


def _report(count: int, p95_ms: float) -> dict:
    successful = {"count": count, "percentiles": {"p50": p95_ms / 2, "p95": p95_ms, "p99": p95_ms * 2}}
    return {"benchmarks": [{"metrics": {"time_to_first_token_ms": {"successful": successful}}}]}


# GuideLLM's stand-in: --version as 0.8.1 prints it; `run` keeps its arguments and writes the JSON it was given
FAKE_GUIDELLM = """#!{python}
import json, pathlib, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("guidellm version: 0.8.1")
    sys.exit(0)
pathlib.Path({argv_file!r}).write_text(json.dumps(args))
output = args[args.index("--output") + 1].split("path=", 1)[1]
pathlib.Path(output).write_text(json.dumps({report}))
sys.exit({exit_code})
"""


def _venv(tmp_path: Path, *, report: dict | None = None, exit_code: int = 0, tokenizer_ok: bool = True) -> Path:
    venv = tmp_path / "peers"
    (venv / "bin").mkdir(parents=True)
    guidellm = venv / "bin" / "guidellm"
    guidellm.write_text(FAKE_GUIDELLM.format(python=sys.executable, argv_file=str(tmp_path / "argv.json"),
                                             report=json.dumps(report or _report(120, 56.25)), exit_code=exit_code))
    # the peer's Python, asked to build the tokenizer into its last argument
    python = venv / "bin" / "python"
    python.write_text('#!/bin/sh\nmkdir -p "$3"\n' if tokenizer_ok
                      else '#!/bin/sh\necho "ModuleNotFoundError: No module named \'tokenizers\'" >&2\nexit 1\n')
    for tool in (guidellm, python):
        os.chmod(tool, 0o755)
    return venv


def test_the_ttft_p95_of_the_completed_requests_in_seconds(overhead):
    assert overhead.guidellm_p95(_report(321, 56.25)) == (0.05625, 321)
    assert overhead.guidellm_p95(_report(0, 0.0)) is None  # nothing completed in the measured window


def test_no_peer_in_the_virtualenv_says_how_to_install_one(overhead, tmp_path):
    peer = overhead.find_peer(str(tmp_path / "none"), tmp_path)
    assert not peer.runnable
    assert peer.reason == (f"neither GuideLLM nor AIPerf in {tmp_path / 'none'} (python3 -m venv {tmp_path / 'none'} "
                           f"&& {tmp_path / 'none'}/bin/pip install guidellm): compared with the bare httpx loop only")


def test_aiperf_alone_is_found_but_not_driven(overhead, tmp_path):
    (tmp_path / "peers" / "bin").mkdir(parents=True)
    (tmp_path / "peers" / "bin" / "aiperf").write_text("")
    peer = overhead.find_peer(str(tmp_path / "peers"), tmp_path)
    assert not peer.runnable
    assert peer.reason == f"AIPerf in {tmp_path / 'peers'} is not driven by this script (GuideLLM is): no peer ratio"


def test_a_tokenizer_that_cannot_be_built_is_the_reason_with_the_peer_s_last_line(overhead, tmp_path):
    peer = overhead.find_peer(str(_venv(tmp_path, tokenizer_ok=False)), tmp_path)
    assert not peer.runnable
    assert peer.reason == (f"GuideLLM 0.8.1: the local tokenizer could not be built in {tmp_path / 'peers'} "
                           "(ModuleNotFoundError: No module named 'tokenizers'): no peer ratio")


def test_guidellm_runs_offline_at_the_same_load_with_a_warm_up_window_and_its_p95_is_read(overhead, tmp_path):
    peer = overhead.find_peer(str(_venv(tmp_path)), tmp_path)
    assert peer.runnable and peer.version == "GuideLLM 0.8.1" and peer.tokenizer == tmp_path / "tokenizer"
    outcome = overhead.run_guidellm(peer, "http://127.0.0.1:9", "kind=concurrent,streams=[64]", 10.0, tmp_path)
    assert outcome == (0.05625, 120)
    args = json.loads((tmp_path / "argv.json").read_text())
    assert args == ["run", "--backend", "kind=openai_http,target=http://127.0.0.1:9,model=m,validate_backend=false",
                    "--profile", "kind=concurrent,streams=[64],warmup=10",
                    "--constraint", "kind=max_duration,seconds=20",
                    "--tokenizer", f"kind=huggingface_auto,model={tmp_path / 'tokenizer'}",
                    "--data", "kind=synthetic_text,prompt_tokens=16,output_tokens=6",
                    "--output", f"kind=json,path={tmp_path / 'guidellm.json'}", "--disable-console"]


def test_a_failed_or_empty_guidellm_run_is_one_line(overhead, tmp_path):
    peer = overhead.find_peer(str(_venv(tmp_path, exit_code=2)), tmp_path)
    assert overhead.run_guidellm(peer, "http://127.0.0.1:9", "kind=constant,rate=[200]", 1.0, tmp_path) == \
        "GuideLLM exited 2: no message"
    empty = tmp_path / "empty"
    empty.mkdir()
    peer = overhead.find_peer(str(_venv(empty, report=_report(0, 0.0))), empty)
    assert overhead.run_guidellm(peer, "http://127.0.0.1:9", "kind=constant,rate=[200]", 1.0, empty) == \
        "GuideLLM completed no request in its measured window"


def test_both_bare_loops_time_the_first_content_chunk_one_way(overhead):
    """The closed and the open bare loop share one timer: seconds from the request to the first "w" content chunk,
    None for a stream that never carries one (role-only chunks and [DONE] do not count)."""
    import asyncio

    import httpx
    import respx

    clock = iter([10.0, 10.25, 99.0])  # start, first content chunk, a later chunk that must not move it
    role = 'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\n'
    token = 'data: {"choices":[{"delta":{"content":"w"}}]}\n\n'

    async def first() -> float | None:
        async with httpx.AsyncClient() as client:
            return await overhead.first_token_seconds(client, "http://127.0.0.1:9", {"model": "m"},
                                                      clock=lambda: next(clock))

    with respx.mock:
        respx.post("http://127.0.0.1:9/v1/chat/completions").respond(
            200, text=role + token + token + "data: [DONE]\n\n")
        assert asyncio.run(first()) == 0.25
    clock = iter([5.0])
    with respx.mock:
        respx.post("http://127.0.0.1:9/v1/chat/completions").respond(200, text=role + "data: [DONE]\n\n")
        assert asyncio.run(first()) is None
