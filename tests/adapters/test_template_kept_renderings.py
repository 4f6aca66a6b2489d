"""Renderings kept on disk: a later run with the same template text, the same context reads and the same rendering
code serves the kept text without making a Jinja2 environment; anything else renders again (issue 34)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import REPO

import gpustack_guard.adapters.templates as T
from gpustack_guard.adapters.templates import TemplateError, TemplateRenderer

BASE = {"vars": {}, "placement": {"gpus": 4}, "backend_version": "0.11.0"}
READS_X = "pinned:\n  - --x={{ vars.x }}\n  - --gpus={{ placement.gpus }}\n"


def kept(cache):
    return sorted(p.name for p in cache.glob("rendering-*.txt"))


def render(folder, cache, context, name="t"):
    renderer = TemplateRenderer([folder], cache_dir=cache)
    return renderer, renderer.render(name, context)


def test_a_second_run_serves_the_kept_rendering_without_jinja(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    first, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert first._jinja is not None and len(kept(cache)) == 1
    again, served = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert served == out and list(served.pinned) == ["--x=1", "--gpus=4"]
    assert served.variables == frozenset({"x"}) and served.source == out.source
    assert again._jinja is None  # no environment made: nothing compiled, parsed or rendered


def test_what_the_template_reads_keys_the_rendering_and_what_it_ignores_does_not(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    other, out = render(tmp_path, cache, {**BASE, "vars": {"x": 2}})
    assert list(out.pinned) == ["--x=2", "--gpus=4"] and other._jinja is not None and len(kept(cache)) == 2
    ignored, same = render(tmp_path, cache, {**BASE, "vars": {"x": 2}, "backend_version": "0.19.0",
                                             "placement": {"gpus": 4, "gpu_ids": ["a"]}})
    assert list(same.pinned) == ["--x=2", "--gpus=4"] and ignored._jinja is None and len(kept(cache)) == 2
    # 1, 1.0 and True render differently: each keeps its own rendering
    for value, shown in ((1.0, "--x=1.0"), (True, "--x=True"), ("1", "--x=1")):
        assert render(tmp_path, cache, {**BASE, "vars": {"x": value}})[1].pinned[0] == shown
    assert len(kept(cache)) == 5


def test_an_edited_template_renders_again(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    (tmp_path / "t.yaml.j2").write_text(READS_X.replace("--x=", "--y="))
    renderer, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert list(out.pinned) == ["--y=1", "--gpus=4"] and renderer._jinja is not None


def test_other_rendering_code_renders_again(tmp_path, monkeypatch):
    """gsg's template modules, Jinja2's package and the sandbox limits are part of the key (_fingerprint)."""
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    before = T._fingerprint()
    monkeypatch.setattr(T.L, "MAX_LOOP_ITERATIONS", T.L.MAX_LOOP_ITERATIONS + 1)
    assert T._fingerprint() != before
    renderer, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert renderer._jinja is not None and len(kept(cache)) == 2 and list(out.pinned) == ["--x=1", "--gpus=4"]
    sandbox = REPO / "gpustack_guard" / "adapters" / "template_sandbox.py"
    stat = sandbox.stat()
    try:
        os.utime(sandbox, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert T._fingerprint() != before
    finally:
        os.utime(sandbox, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_template_that_includes_another_keeps_no_rendering(tmp_path):
    (tmp_path / "inner.yaml.j2").write_text("  - --y={{ vars.y }}\n")
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --x={{ vars.x }}\n{% include 'inner.yaml.j2' %}")
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1, "y": 2}})
    (tmp_path / "inner.yaml.j2").write_text("  - --y={{ vars.y }}0\n")
    renderer, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1, "y": 2}})
    assert list(out.pinned) == ["--x=1", "--y=20"] and kept(cache) == []


def test_a_failed_rendering_keeps_nothing_and_fails_again_the_same_way(tmp_path):
    (tmp_path / "t.yaml.j2").write_text("pinned:\n  - --a=1\n  - --b={{ vars.nope }}\n")
    cache = tmp_path / "cache"
    messages = []
    for _ in range(2):
        with pytest.raises(TemplateError) as err:
            render(tmp_path, cache, BASE)
        messages.append((str(err.value), err.value.line))
    assert messages[0] == messages[1] and messages[0][1] == 3 and kept(cache) == []


@pytest.mark.parametrize("stored", [b"\xff\xfe not UTF-8", b"x" * (T.MAX_KEPT_RENDERING_BYTES + 1),
                                    ("y" * (T.L.MAX_OUTPUT_CHARS + 1)).encode(), b"pinned: [\n",
                                    b"pinned:\n  - --x=1\npinned: []\n"])
def test_a_kept_file_not_as_written_renders_again(tmp_path, stored):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    (path,) = cache.glob("rendering-*.txt")
    path.write_bytes(stored)
    renderer, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert renderer._jinja is not None and list(out.pinned) == ["--x=1", "--gpus=4"]
    assert path.read_text() == "pinned:\n  - --x=1\n  - --gpus=4\n"  # written anew, whole


def test_an_oversized_template_is_refused_as_before_when_a_rendering_was_kept(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    (tmp_path / "t.yaml.j2").write_text(READS_X + "#" * T.L.MAX_TEMPLATE_BYTES)
    with pytest.raises(TemplateError, match="bytes \\(the sandbox limit is 65,536\\)"):
        render(tmp_path, cache, {**BASE, "vars": {"x": 1}})


def test_a_cache_folder_that_cannot_be_written_renders_every_time(tmp_path):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    cache.write_text("a file where the folder should be")
    for _ in range(2):
        renderer, out = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
        assert renderer._jinja is not None and list(out.pinned) == ["--x=1", "--gpus=4"]


def test_a_second_validate_run_of_the_quickstart_imports_no_jinja(tmp_path):
    """The same reports, exit codes and stderr from a cold and a warm cache; the warm run never imports Jinja2."""
    env = {**os.environ, "GSG_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-X", "importtime", "-m", "gpustack_guard", "validate", "specs/", "--fleet",
               "examples/fleet.yaml", "--offline", "-o", "json"]
    runs = [subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    imported = [{line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
                for run in runs]
    assert "jinja2" in imported[0] and "jinja2" not in imported[1]
    assert "gpustack_guard.adapters.template_sandbox" not in imported[1]
    shown = [[line for line in run.stderr.splitlines() if not line.startswith("import time:")] for run in runs]
    assert runs[0].stdout == runs[1].stdout and shown[0] == shown[1] and runs[0].returncode == runs[1].returncode
    assert '"rule_id"' in runs[0].stdout or '"findings"' in runs[0].stdout


@pytest.mark.parametrize("template, kept_files", [
    ("pinned:\n  - --name={{ spec.name }}\n", 1),  # the spec's name: kept
    ("pinned:\n  - --key={{ spec.env.API_KEY }}\n", 0),  # the spec's env may hold a literal secret: never written
    ("pinned:\n  - --n={{ spec | length }}\n", 0),  # the whole spec: its env among it
])
def test_a_rendering_that_reads_the_specs_env_is_never_kept(tmp_path, template, kept_files):
    (tmp_path / "t.yaml.j2").write_text(template)
    cache = tmp_path / "cache"
    context = {**BASE, "spec": {"name": "svc", "env": {"API_KEY": "hf_literalsecretvalue"}}}
    for _ in range(2):
        render(tmp_path, cache, context)
    assert len(kept(cache)) == kept_files
    assert not any(b"hf_literalsecretvalue" in p.read_bytes() for p in cache.glob("*") if p.is_file())


def test_the_cache_holds_at_most_max_kept_renderings(tmp_path, monkeypatch):
    """Past the bound nothing more is written; every spec still renders, a kept one is still served."""
    monkeypatch.setattr(T, "MAX_KEPT_RENDERINGS", 2)
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    renderer = TemplateRenderer([tmp_path], cache_dir=cache)
    outs = [renderer.render("t", {**BASE, "vars": {"x": x}}) for x in (1, 2, 3)]
    assert [o.pinned[0] for o in outs] == ["--x=1", "--x=2", "--x=3"] and len(kept(cache)) == 2
    later, out = render(tmp_path, cache, {**BASE, "vars": {"x": 4}})
    assert out.pinned[0] == "--x=4" and len(kept(cache)) == 2  # a full folder, counted by the next run too
    served, again = render(tmp_path, cache, {**BASE, "vars": {"x": 1}})
    assert again.pinned[0] == "--x=1" and served._jinja is None


def test_the_template_text_is_read_once_per_renderer_for_the_kept_renderings(tmp_path, monkeypatch):
    (tmp_path / "t.yaml.j2").write_text(READS_X)
    cache = tmp_path / "cache"
    render(tmp_path, cache, {**BASE, "vars": {"x": 0}})  # the stored analysis
    reads = []
    monkeypatch.setattr(T, "template_source", lambda path: reads.append(path) or READS_X)
    renderer = TemplateRenderer([tmp_path], cache_dir=cache)
    for x in range(5):  # five contexts, none kept yet: rendered and kept
        assert renderer.render("t", {**BASE, "vars": {"x": x}}).pinned[0] == f"--x={x}"
    assert len(reads) == 1 and len(kept(cache)) == 5
