"""The memory picture: bars carry the JSON's numbers exactly, the page is self-contained, and a real headless
Chromium loads it without console messages and paints a non-blank screenshot."""

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support import FLEET, REPO
from support.browser import CHROMIUM, png_rows

from gpustack_guard.reporters.memory_html import BAR_HEIGHT

GIB = 1024**3
ENGINE_PARTS = ("weights", "activation", "non_torch", "cuda_graphs", "kv_cache")


class Bars(HTMLParser):
    """svg.bar elements and their rect.seg segments: {gpu: {"total": int, "segments": [(kind, owner, bytes, h)]}}."""

    def __init__(self):
        super().__init__()
        self.bars, self.current = {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and a.get("class") == "bar":
            self.current = self.bars.setdefault(a["data-gpu"], {"total": int(a["data-total"]), "segments": []})
        elif tag == "rect" and a.get("class") == "seg":
            self.current["segments"].append((a["data-kind"], a["data-owner"], int(a["data-bytes"]),
                                             float(a["height"])))


def parse_bars(html):
    parser = Bars()
    parser.feed(html)
    return parser.bars


@pytest.fixture
def validated(gsg):
    html = gsg("validate", str(REPO / "specs"), "--fleet", str(FLEET), "-o", "html")
    doc = gsg("validate", str(REPO / "specs"), "--fleet", str(FLEET), "-o", "json")
    assert html.code == 0 and doc.code == 0
    return html.out, json.loads(doc.out)


def test_every_bar_segment_is_the_json_number(validated):
    html, doc = validated
    bars = parse_bars(html)
    assert len(bars) == 12  # every GPU of the field-notes fleet
    scale = BAR_HEIGHT / max(b["total"] for b in bars.values())
    checked = 0
    for deployment in doc["deployments"]:
        est = deployment["estimate"]
        for gpu in [g for replica in deployment["placement"]["replicas"] for g in replica]:
            own = {kind: (size, height) for kind, owner, size, height in bars[gpu]["segments"]
                   if owner == deployment["name"]}
            for kind in ENGINE_PARTS:
                assert own[kind][0] == est["breakdown"][kind], (gpu, kind)
            assert own["headroom"][0] == est["footprint_bytes_per_gpu"] - sum(est["breakdown"][k] for k in ENGINE_PARTS)
            for size, height in own.values():
                assert abs(height - size * scale) < 0.01
            checked += 1
    assert checked == 9  # 4 + 2 + 2 + 1 GPUs carry the four specs


def test_other_deployments_and_foreign_usage_are_drawn(validated):
    bars = parse_bars(validated[0])
    assert [(k, o, b) for k, o, b, _ in bars["gpu-b:cuda:3"]["segments"]] == \
        [("other", "bge-m3", 8 * GIB), ("foreign", "processes GPUStack does not manage", 1 * GIB)]
    assert [(k, b) for k, _, b, _ in bars["gpu-d:cuda:1"]["segments"]] == [("foreign", 1536 * 1024**2)]
    assert bars["gpu-c:cuda:0"]["total"] == 24564 * 1024**2


def test_the_breaking_finding_is_beside_its_bars(validated):
    html = validated[0]
    blocks = re.findall(r'<div class="gpu" data-gpu="([^"]+)">(.*?)</div></div>', html)
    beside = {gpu: "GSG033" in block for gpu, block in blocks}
    assert [g for g, has in beside.items() if has] == [f"gpu-a:cuda:{i}" for i in range(4)]


def test_the_page_fetches_nothing(validated):
    html = validated[0]
    assert not re.search(r"""(src|href)\s*=|<link|@import|url\(""", html)
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html


def test_an_advise_page_shows_the_candidates_side_by_side(gsg):
    result = gsg("advise", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB", "--gpus", "4",
                 "-w", str(REPO / "workloads" / "chat.yaml"), "-w", str(REPO / "workloads" / "nightly-batch.yaml"),
                 "-o", "html")
    assert result.code == 0
    assert re.findall(r'data-option="([^"]+)"', result.out) == ["shared", "shared-with-priority", "separate"]
    assert '<section class="option chosen" data-option="shared-with-priority">' in result.out
    kv = [int(b) for b in re.findall(r'data-kind="kv_cache" data-owner="[^"]+" data-bytes="(\d+)"', result.out)]
    # the two one-pool candidates, one bar each (worst rank), then the separate pools' closest candidates: weights
    # alone overflow them, so their bars carry no KV cache and say so
    assert len(kv) == 4 and kv[0] == kv[1] > 0 and kv[2:] == [0, 0]
    assert result.out.count("(closest, does not fit)") == 2 and "GSG031" in result.out


def test_a_does_not_fit_page_still_shows_the_closest_bar(gsg):
    result = gsg("advise", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB", "--gpus", "2",
                 "-w", str(REPO / "workloads" / "chat.yaml"), "-o", "html")
    assert result.code == 1
    weights = [int(b) for b in re.findall(r'data-kind="weights" data-owner="[^"]+" data-bytes="(\d+)"', result.out)]
    # the 70B over two GPUs (65.71 GiB a GPU): the candidate that overshoots least is PP 2, whose stages pay no TP
    # device-group NCCL communicator (vLLM 0.11-0.26 makes it inside the profile for TP 2: 0.73 GiB more non-torch)
    assert weights == [70_587_252_736]
    assert "llama-3.3-70b-instruct (closest, does not fit)" in result.out


# --- a real browser ---------------------------------------------------------------------------------------

def chromium(page: Path, shot: Path) -> str:
    result = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                             "--enable-logging=stderr", "--v=0", "--window-size=1200,900",
                             "--force-device-scale-factor=0.5", f"--screenshot={shot}",
                             page.as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_chromium_loads_the_page_cleanly_and_paints_it(validated, tmp_path):
    page, shot = tmp_path / "memory.html", tmp_path / "memory.png"
    page.write_text(validated[0])
    log = chromium(page, shot)
    console = [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == []
    width, height, _, rows = png_rows(shot.read_bytes())
    assert (width, height) == (600, 450)  # a 1200 x 900 layout at half scale: a quarter of the pixels to decode
    colours = {row[x:x + 3] for row in rows[::5] for x in range(0, len(row), 15)}
    assert len(colours) > 8  # not a blank page: bars in several colours
    # the weights blue (#4c6ef5) is painted somewhere
    assert any(abs(c[0] - 0x4C) < 8 and abs(c[1] - 0x6E) < 8 and abs(c[2] - 0xF5) < 8 for c in colours)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_the_console_check_does_catch_a_script_error(tmp_path):
    page, shot = tmp_path / "broken.html", tmp_path / "broken.png"
    page.write_text("<!DOCTYPE html><html><body><script>notDefinedAnywhere()</script></body></html>")
    assert "Uncaught ReferenceError: notDefinedAnywhere is not defined" in chromium(page, shot)


def test_an_overcommitted_gpu_comes_first_with_its_overflow_and_error(gsg):
    result = gsg("validate", str(REPO / "examples" / "negative" / "GSG035-gpu-overcommit"), "--fleet", str(FLEET),
                 "-o", "html")
    assert result.code == 1
    bars = parse_bars(result.out)
    first = next(iter(bars))
    assert first == "gpu-d:cuda:1"
    used = sum(size for _, _, size, _ in bars[first]["segments"])
    overflow = re.search(r'class="overflow"[^>]*data-bytes="(\d+)"', result.out)
    assert overflow and int(overflow.group(1)) == used - bars[first]["total"] > 0
    block = re.search(r'<div class="gpu" data-gpu="gpu-d:cuda:1">(.*?)</div></div>', result.out).group(1)
    assert block.index("GSG035") < block.index("GSG033")  # the error that breaks it is named first


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
def test_chromium_loads_the_advise_page_cleanly(gsg, tmp_path):
    result = gsg("advise", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--gpu-memory", "49140MiB", "--gpus", "4",
                 "-w", str(REPO / "workloads" / "chat.yaml"), "-w", str(REPO / "workloads" / "nightly-batch.yaml"),
                 "-o", "html")
    page, shot = tmp_path / "advise.html", tmp_path / "advise.png"
    page.write_text(result.out)
    log = chromium(page, shot)
    assert [line for line in log.splitlines() if ":CONSOLE" in line or "Uncaught" in line] == []
    _, _, _, rows = png_rows(shot.read_bytes())
    assert len({row[x:x + 3] for row in rows[::5] for x in range(0, len(row), 15)}) > 8
