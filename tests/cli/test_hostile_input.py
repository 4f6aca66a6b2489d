"""Hostile input files (issue 31), one test per class over every kind of file gsg reads: YAML tags, files that
are not regular files (a FIFO, a device, a socket, a folder), files past a size, depth or count limit, symbolic
links out of the spec tree, mistyped contexts. Each ends in exit 1 with one line naming the file (a finding in a
spec tree, `gsg: error:` elsewhere), in well under two seconds, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest
from support import FLEET, REPO

from gpustack_guard.adapters.files import regular_file, yaml_positions

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, "intermediate_size": 1024,
          "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1000,
          "max_position_embeddings": 2048, "torch_dtype": "bfloat16"}
WORKLOAD = "name: chat\nprompt_tokens: 100\noutput_tokens: 10\nconcurrency: 1\n"
VALIDATE = ("validate", "specs", "--fleet", str(FLEET), "--offline")
ADVISE = ("advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory", "24GiB",
          "--offline")


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _one_line(result, started: float) -> str:
    """The run ended fast in exit 1 with no traceback; its one error line (stderr, else the first finding)."""
    assert time.process_time() - started < 2.0
    assert result.code == 1, (result.out, result.err)
    assert "Traceback" not in result.out + result.err and "internal error" not in result.err
    errors = [line for line in result.err.splitlines() if line.startswith("gsg: error:")]
    if errors:
        assert len(errors) == 1
        return errors[0]
    return next(line for line in result.out.splitlines() if " error GSG" in line)


# --- YAML tags in every YAML file gsg reads ---------------------------------------------------------------------
TAGGED = {  # a value, what the line says
    "!!bool maybe": "'maybe' is not a valid bool",
    "!!timestamp soon": "'soon' is not a valid timestamp",
    "!!null x": "'x' is not a valid null",
    "!!binary aGk=": "YAML tag '!!binary' is not supported",
    "!!python/object:os.system {}": "YAML tag '!!python/object:os.system' is not supported",
    "!!set {a, b}": "YAML tag '!!set' is not supported",
    "!!omap [a: 1]": "YAML tag '!!omap' is not supported",
    "!custom {a: 1}": "YAML tag '!custom' is not supported",
    "!custom [1]": "YAML tag '!custom' is not supported",
    "!custom x": "YAML tag '!custom' is not supported",
}

PLACES = {  # files, the args, where the tagged value lands (file:line:column)
    "spec": ({"specs/a.yaml": SPEC + "description: {v}\n"}, VALIDATE, "specs/a.yaml:23:14: error GSG001"),
    "overlay": ({"specs/a.yaml": SPEC, "specs/overlays/p/a.yaml": "name: llama-8b\ndescription: {v}\n"},
                (*VALIDATE, "--overlay", "p"), "specs/overlays/p/a.yaml:2:14: error GSG001"),
    "fleet": ({"specs/a.yaml": SPEC, "fleet.yaml": "format_version: {v}\nclusters: []\n"},
              ("validate", "specs", "--fleet", "fleet.yaml", "--offline"), "gsg: error: fleet.yaml:1:17: "),
    "workload": ({"w.yaml": WORKLOAD + "note: {v}\n"}, ADVISE, "gsg: error: w.yaml:5:7: "),
    "project": ({"specs/a.yaml": SPEC, "specs/gsg.yaml": "project: {v}\n"}, VALIDATE,
                "gsg: error: specs/gsg.yaml:1:10: "),
    "context": ({"specs/a.yaml": SPEC, "cfg.yaml": "contexts:\n  a:\n    server: http://127.0.0.1:9\n    fleet: {v}\n"},
                ("validate", "specs", "--context", "a", "--offline"), "gsg: error: cfg.yaml:4:12: "),
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("value", sorted(TAGGED))
def test_a_tag_in_any_yaml_file_is_one_line_at_its_place(gsg, tmp_path, monkeypatch, place, value):
    files, args, where = PLACES[place]
    _write(tmp_path, {name: text.replace("{v}", value) for name, text in files.items()})
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    started = time.process_time()
    line = _one_line(gsg(*args, cwd=tmp_path), started)
    assert line.startswith(where) and TAGGED[value] in line, line


# --- files that are not regular files -------------------------------------------------------------------------
def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def _device(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "a character device"


def _socket(path: Path, keep: list) -> str:
    listener = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(path.parent)  # a socket's path is limited to ~100 bytes: bind by its short relative name
    try:
        listener.bind(path.name)
    finally:
        os.chdir(here)
    keep.append(listener)
    return "a socket"


def _folder(path: Path) -> str:
    path.mkdir()
    return "a folder"


GGUF_SPEC = SPEC.replace("backend: vLLM", "backend: llama.cpp").replace(
    "guard:\n", "guard:\n  model:\n    gguf: m.gguf\n", 1)
CONFIG_SPEC = SPEC.replace("guard:\n", "guard:\n  model:\n    config: model/config.json\n", 1)
WHERE = {  # what is not a regular file, the other files, the args, the start of the line
    "spec": ("specs/b.yaml", {"specs/a.yaml": SPEC}, ("validate", "specs/a.yaml", "specs/b.yaml", "--fleet",
                                                      str(FLEET), "--offline"),
             "specs/b.yaml:1:1: error GSG019 unreadable-file: cannot be read: not a regular file ({kind})"),
    # in a walked tree: a FIFO is read (and refused); /dev/zero is a link out of the tree (not read)
    "spec in a tree": ("specs/b.yaml", {"specs/a.yaml": SPEC}, VALIDATE, "specs/b.yaml:1:1: error GSG019 "
                       "unreadable-file: cannot be read: not a regular file ({kind})"),
    "fleet": ("fleet.yaml", {"specs/a.yaml": SPEC}, ("validate", "specs", "--fleet", "fleet.yaml"),
              "gsg: error: fleet.yaml: not a regular file ({kind})"),
    "workload": ("w.yaml", {}, ADVISE, "gsg: error: w.yaml: not a regular file ({kind})"),
    "project": ("specs/gsg.yaml", {"specs/a.yaml": SPEC}, VALIDATE,
                "gsg: error: specs/gsg.yaml: not a regular file ({kind})"),
    "context": ("cfg.yaml", {"specs/a.yaml": SPEC}, ("validate", "specs", "--context", "a"),
                "gsg: error: cfg.yaml: not a regular file ({kind})"),
    "config.json": ("specs/model/config.json", {"specs/a.yaml": CONFIG_SPEC}, VALIDATE,
                    "specs/a.yaml:5:22: error GSG030 model-facts [llama-8b]: no memory arithmetic possible: "
                    "config:model/config.json: not a regular file ({kind})"),
    "index": ("specs/model/model.safetensors.index.json",
              {"specs/a.yaml": CONFIG_SPEC, "specs/model/config.json": json.dumps(CONFIG)}, VALIDATE,
              "specs/a.yaml:5:22: error GSG030 model-facts [llama-8b]: no memory arithmetic possible: "
              "model.safetensors.index.json: not a regular file ({kind})"),
    "gguf": ("specs/m.gguf", {"specs/a.yaml": GGUF_SPEC}, VALIDATE, "specs/a.yaml:5:22: error GSG030 model-facts "
             "[llama-8b]: no memory arithmetic possible: m.gguf: not a regular file ({kind})"),
    "estimate config": ("x/config.json", {}, ("estimate", "-m", "x/config.json", "--gpu-memory", "24GiB"),
                        "gsg: error: x/config.json: not a JSON config: not a regular file ({kind})"),
    "estimate gguf": ("x.gguf", {}, ("estimate", "-m", "x.gguf", "--gpu-memory", "24GiB", "--backend", "llama.cpp"),
                      "gsg: error: x.gguf: GSG030 model-facts: x.gguf: not a regular file ({kind})"),
    "api key file": ("key", {"specs/a.yaml": SPEC}, ("plan", "specs", "--server", "http://127.0.0.1:9",
                                                     "--api-key-file", "key"),
                     "gsg: error: key: not a regular file ({kind})"),
    "template": ("t/mine.yaml.j2", {"specs/a.yaml": SPEC.replace("vllm-hardened", "mine")},
                 (*VALIDATE, "--templates", "t"), "specs/a.yaml:15:13: error GSG011 template [llama-8b]: template "
                 "'mine' stopped in t/mine.yaml.j2: template file t/mine.yaml.j2 cannot be read: not a regular file "
                 "({kind})"),
}
MAKERS = {"fifo": _fifo, "device": _device, "socket": _socket, "folder": _folder}


@pytest.mark.parametrize("maker", sorted(MAKERS))
@pytest.mark.parametrize("where", sorted(WHERE))
def test_what_is_not_a_regular_file_is_one_line_never_a_hang(gsg, tmp_path, monkeypatch, where, maker):
    target, files, args, says = WHERE[where]
    if maker == "folder" and where in ("spec", "spec in a tree", "estimate config", "estimate gguf"):
        pytest.skip("a folder there is walked or looked into: test_loader_rules.py, test_estimate_cli.py")
    if maker == "device" and where == "spec in a tree":
        pytest.skip("a link out of the tree: test_links_out_of_the_spec_tree_are_findings_and_not_read")
    _write(tmp_path, files)
    if where == "context":
        monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
    keep: list = []
    kind = MAKERS[maker](tmp_path / target, keep) if maker == "socket" else MAKERS[maker](tmp_path / target)
    started = time.process_time()
    line = _one_line(gsg(*args, "--offline", cwd=tmp_path) if where == "estimate gguf" else
                     gsg(*args, cwd=tmp_path), started)
    assert line.startswith(says.format(kind=kind)), line
    for listener in keep:
        listener.close()


# --- sizes, depth and counts ------------------------------------------------------------------------------------
def test_a_sparse_config_of_a_terabyte_is_refused_before_a_byte_is_read(gsg, tmp_path):
    _write(tmp_path, {"specs/a.yaml": CONFIG_SPEC})
    (tmp_path / "specs/model").mkdir()
    with open(tmp_path / "specs/model/config.json", "wb") as sparse:
        sparse.truncate(1 << 40)
    started = time.process_time()
    line = _one_line(gsg(*VALIDATE, cwd=tmp_path), started)
    assert line.endswith("config:model/config.json: file of 1,099,511,627,776 bytes (limit 8,388,608): checked "
                         "before reading"), line


@pytest.mark.parametrize("limit, size, refused", [(1_000, 1_000, False), (1_000, 1_001, True)])
def test_the_config_size_limit_and_its_neighbour(gsg, tmp_path, monkeypatch, limit, size, refused):
    monkeypatch.setattr(regular_file, "MAX_CONFIG_BYTES", limit)
    monkeypatch.setattr("gpustack_guard.adapters.model_sources.resolver.MAX_CONFIG_BYTES", limit)
    text = json.dumps(CONFIG)
    _write(tmp_path, {"specs/a.yaml": CONFIG_SPEC, "specs/model/config.json": text + " " * (size - len(text))})
    result = gsg(*VALIDATE, cwd=tmp_path)
    assert (f"file of {size:,} bytes (limit {limit:,})" in result.out) is refused


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
                                  "[" * 65 + "]" * 65])
def test_a_deeply_nested_config_is_one_line(gsg, tmp_path, text):
    _write(tmp_path, {"specs/a.yaml": CONFIG_SPEC, "specs/model/config.json": text})
    started = time.process_time()
    line = _one_line(gsg(*VALIDATE, cwd=tmp_path), started)
    assert line.endswith("config:model/config.json: nested more than 64 levels deep"), line
    estimate = gsg("estimate", "-m", "specs/model/config.json", "--gpu-memory", "24GiB", cwd=tmp_path)
    assert estimate.err == ("gsg: error: specs/model/config.json: not a JSON config: nested more than 64 levels "
                            "deep\n")


def test_64_levels_of_config_are_read(gsg, tmp_path):
    config = dict(CONFIG, extra="[" * 63 + "]" * 63)
    text = json.dumps(config).replace('"' + "[" * 63 + "]" * 63 + '"', "[" * 63 + "]" * 63)
    _write(tmp_path, {"specs/a.yaml": CONFIG_SPEC, "specs/model/config.json": text})
    assert "GSG030" not in gsg(*VALIDATE, cwd=tmp_path).out


@pytest.mark.parametrize("body, where, says", [
    ("backend_parameters:\n" + "  - --x\n" * 4_097, "specs/a.yaml:24:3", "a list of 4,097 items or more (limit 4,096)"),
    ("env:\n" + "".join(f"  K{i}: v\n" for i in range(4_097)), "specs/a.yaml:24:3",
     "a mapping of 4,097 keys or more (limit 4,096)"),
    ("categories: [" + "llm," * 1_000_000 + "]\n", "specs/a.yaml:23:13", "a list of 4,097 items or more"),
])
def test_a_spec_collection_past_the_count_limit_is_one_finding_fast(gsg, tmp_path, body, where, says):
    _write(tmp_path, {"specs/a.yaml": SPEC + body})
    started = time.process_time()
    line = _one_line(gsg(*VALIDATE, cwd=tmp_path), started)
    assert line.startswith(f"{where}: error GSG017 input-limit: {says}"), line


def test_4096_items_are_read(gsg, tmp_path):
    _write(tmp_path, {"specs/a.yaml": SPEC.replace("backend_parameters:\n", "backend_parameters:\n" + "  - --x\n" * 4_095)})
    assert "GSG017" not in gsg(*VALIDATE, cwd=tmp_path).out


def test_a_settings_file_past_the_node_limit_is_one_line(gsg, tmp_path, monkeypatch):
    monkeypatch.setattr(yaml_positions, "MAX_NODES", 1_000)
    monkeypatch.setattr(yaml_positions, "COUNT_ABOVE", 100)
    fleet = "clusters:\n- name: c\n  workers:\n" + "".join(f"  - {{name: w{i}}}\n" for i in range(400))
    _write(tmp_path, {"specs/a.yaml": SPEC, "fleet.yaml": fleet})
    result = gsg("validate", "specs", "--fleet", "fleet.yaml", cwd=tmp_path)
    # 8 nodes before the workers, 3 per worker: the 1,001st is worker 330's name, line 334
    assert result.err == ("gsg: error: fleet.yaml:334:12: more than 1,000 values, lists and mappings in one file: "
                          "split it\n")


def test_unused_template_variables_cost_linear_time(gsg, tmp_path):
    """One finding per unused guard.vars key, each placed by a lookup: 4,000 of them took seconds when each
    lookup scanned the mapping."""
    variables = "".join(f"    v{i}: 1\n" for i in range(4_000))
    _write(tmp_path, {"specs/a.yaml": SPEC.replace("  vars:\n", "  vars:\n" + variables)})
    started = time.process_time()
    result = gsg(*VALIDATE, cwd=tmp_path)
    assert time.process_time() - started < 2.0
    assert result.out.count("guard.vars.v") >= 4_000 and "specs/a.yaml:4016:5:" in result.out


# --- symbolic links out of the tree -----------------------------------------------------------------------------
def test_links_out_of_the_spec_tree_are_findings_and_not_read(gsg, tmp_path):
    _write(tmp_path, {"specs/a.yaml": SPEC, "outside/b.yaml": SPEC.replace("llama-8b", "secret-b"),
                      "outside/c.yaml": SPEC.replace("llama-8b", "secret-c")})
    (tmp_path / "specs" / "more").symlink_to(tmp_path / "outside")
    (tmp_path / "specs" / "c.yaml").symlink_to(tmp_path / "outside" / "c.yaml")
    (tmp_path / "specs" / "etc").symlink_to("/etc")
    (tmp_path / "specs" / "here").symlink_to(".")  # inside: its files are read once, where they are
    result = gsg(*VALIDATE, cwd=tmp_path)
    assert result.code == 1 and "secret" not in result.out
    findings = [line for line in result.out.splitlines() if "GSG019" in line]
    assert findings == [
        "specs/c.yaml: error GSG019 unreadable-file: a symbolic link to a file outside specs: not read",
        "specs/etc: error GSG019 unreadable-file: a symbolic link to a folder outside specs: not read",
        "specs/more: error GSG019 unreadable-file: a symbolic link to a folder outside specs: not read"]
    assert "in 1 spec (" in result.err


def test_a_link_given_by_name_is_read(gsg, tmp_path):
    _write(tmp_path, {"outside/b.yaml": SPEC})
    (tmp_path / "specs").symlink_to(tmp_path / "outside")
    result = gsg(*VALIDATE, cwd=tmp_path)
    assert "GSG019" not in result.out and "in 1 spec (1 file)" in result.err


# --- contexts ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line, says", [
    ("    fleet: 2001-12-14\n", "context 'a': `fleet` must be text, not a date"),
    ("    fleet: [a]\n", "context 'a': `fleet` must be text, not a list"),
    ("    overlay: 3\n", "context 'a': `overlay` must be text, not a number"),
    ("    api-key-env: {x: 1}\n", "context 'a': `api-key-env` must be text, not a mapping"),
    ("    cluster: true\n", "context 'a': `cluster` must be text, not true/false"),
])
def test_a_context_field_of_the_wrong_type_is_one_line(gsg, tmp_path, monkeypatch, line, says):
    _write(tmp_path, {"specs/a.yaml": SPEC, "cfg.yaml": "contexts:\n  a:\n    server: http://127.0.0.1:9\n" + line})
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    result = gsg("validate", "specs", "--context", "a", cwd=tmp_path)
    assert result.code == 1 and result.err == f"gsg: error: cfg.yaml:4:{line.index(':') + 3}: {says}\n"


@pytest.mark.parametrize("text, says", [
    ("current-context: [a]\ncontexts:\n  a: {server: http://x}\n",
     "cfg.yaml:1:18: `current-context` must be a context name, not a list"),
    # before (round 26): "cfg.yaml:2: a context name is text, not a number", without the column or why
    ("contexts:\n  1: {server: http://x}\n", "cfg.yaml:2:3: a key of contexts is a number (written '1'), not a context "
     "name: YAML reads unquoted digits as a number (quote the key, or correct it)"),
])
def test_context_names_are_text(gsg, tmp_path, monkeypatch, text, says):
    _write(tmp_path, {"specs/a.yaml": SPEC, "cfg.yaml": text})
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    result = gsg("validate", "specs", "--context", "a", cwd=tmp_path)
    assert result.code == 1 and result.err == f"gsg: error: {says}\n"
