"""Hostile paths and logs for gsg verify --log: each ends in one line and exit 1, never a hang or a traceback;
a log cut mid-number never yields a wrong figure. Full-size runs (300 MiB): benchmarks/hostile_logs.py."""

from __future__ import annotations

import os
import time

import pytest

KV_LOG = ("INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.1\n"
          "INFO [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.6 seconds\n"
          "INFO [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens\n")
MODEL = ("-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "80GiB")


def one_line_error(result) -> str:
    assert result.code == 1 and result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    return lines[0]


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(gsg, tmp_path):
    fifo = tmp_path / "engine.log"
    os.mkfifo(fifo)
    began = time.monotonic()
    assert one_line_error(gsg("verify", "--log", str(fifo))) == f"gsg: error: {fifo}: not a regular file (a FIFO)"
    assert time.monotonic() - began < 2


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_before_a_byte_is_read(gsg, device):
    assert one_line_error(gsg("verify", "--log", device)) == \
        f"gsg: error: {device}: not a regular file (a character device)"


def test_unreadable_paths_are_one_line_each(gsg, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert one_line_error(gsg("verify", "--log", str(tmp_path / "loop"))) == \
        f"gsg: error: {tmp_path / 'loop'}: symbolic link loop"
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.log")
    assert one_line_error(gsg("verify", "--log", str(tmp_path / "dangling"))) == \
        f"gsg: error: {tmp_path / 'dangling'}: broken symbolic link (to {tmp_path / 'gone.log'})"
    (tmp_path / "a.log").write_text(KV_LOG)
    assert one_line_error(gsg("verify", "--log", str(tmp_path / "a.log" / "x"))) == \
        f"gsg: error: {tmp_path / 'a.log' / 'x'}: not a directory"
    assert one_line_error(gsg("verify", "--log", str(tmp_path))) == \
        f"gsg: error: {tmp_path}: not a regular file (a folder)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_without_read_permission_is_one_line(gsg, tmp_path):
    locked = tmp_path / "locked.log"
    locked.write_text(KV_LOG)
    locked.chmod(0)
    assert one_line_error(gsg("verify", "--log", str(locked))) == f"gsg: error: {locked}: permission denied"


@pytest.mark.parametrize("content,message", [
    (b"I\x00N\x00F\x00O\x00", "not a text log (binary data at byte 1)"),  # UTF-16 without a BOM: NUL bytes
    (b"\x00" * 100, "not a text log (binary data at byte 0)"),
    (b"\n\n\n", "no start-up line of vLLM, SGLang or llama.cpp in its 3 line(s)"),
    # binary after the 8 KiB probe: read as text with replacement characters, and nothing in it matches
    (b"x" * 9000 + b"\n" + bytes(range(256)) * 64, "no start-up line of vLLM, SGLang or llama.cpp in its "
                                                   "66 line(s)"),  # one newline in each of the 64 runs
])
def test_binary_and_empty_looking_logs_are_one_line(gsg, tmp_path, content, message):
    path = tmp_path / "odd.log"
    path.write_bytes(content)
    assert one_line_error(gsg("verify", "--log", str(path))) == f"gsg: error: {path}: {message}"


@pytest.mark.parametrize("cut_at,kv_shown", [
    ("GPU KV cache size: 158,6", None),  # inside the number: never 158 or 1,586 tokens
    ("GPU KV cache size: 158,656", None),  # the number may go on: not read either
    ("GPU KV cache size: 158,656 tok", None),  # the unit cut: the pattern does not match
    ("GPU KV cache size: 158,656 tokens", 158_656),  # only the newline missing: read
])
def test_a_log_that_stops_mid_line_never_reads_a_cut_number(gsg, tmp_path, cut_at, kv_shown):
    import json

    path = tmp_path / "cut.log"
    path.write_text(KV_LOG.rsplit("\n", 2)[0] + "\nINFO [kv_cache_utils.py:634] " + cut_at)
    result = gsg("verify", "--log", str(path), *MODEL, "-o", "json")
    doc = json.loads(result.out)
    assert result.code == 1
    assert doc["observed"].get("kv_capacity_tokens") == kv_shown
    cut_note = "the log stops mid-line, in a number: that number was not read"
    assert (cut_note in doc["notes"]) == cut_at.endswith(("158,6", "158,656"))
    if kv_shown is None:
        assert "the log lacks 'GPU KV cache size' (V1) or '# GPU blocks' (V0)" in doc["reasons"]


def test_a_line_cut_by_the_line_cap_drops_its_cut_argument(gsg, tmp_path, monkeypatch):
    # the arguments line is longer than the cap: the value it was cut in (32768 cut to 3276) is not read
    args = "{'model': 'meta-llama/Llama-3.1-8B-Instruct', 'pad': '" + "p" * 5000 + "', 'max_model_len': 32768}"
    line = f"INFO 09-03 16:28:10 [utils.py:328] non-default args: {args}\n"
    cap = line.index("32768") + 4
    monkeypatch.setenv("GSG_MAX_LOG_LINE_BYTES", str(cap))
    path = tmp_path / "long-args.log"
    path.write_text(KV_LOG.split("\n", 1)[0] + "\n" + line + KV_LOG.split("\n", 1)[1])
    import json

    doc = json.loads(gsg("verify", "--log", str(path), "--gpu-memory", "80GiB", "-o", "json").out)
    assert "max_model_len" not in doc["arguments"] and doc["arguments"]["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert f"1 line(s) longer than {cap:,} bytes were cut (GSG_MAX_LOG_LINE_BYTES)" in doc["notes"]
