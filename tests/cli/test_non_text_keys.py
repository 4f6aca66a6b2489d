"""Keys YAML reads as no text (round 26): in every settings file (fleet snapshot, workload, gsg.yaml, contexts file,
soak's workload, overlay) a key written `yes:`, `7:`, `~:`, `2024-01-01:` or `[a]:` is one line at its file:line:column naming the
key as written and why, exit 1. Before: a fleet's or workload's `yes:` said "'1': Keys should be strings" at the
value, gsg.yaml and a context's body "unknown field 'True'", and a contexts file's top-level `yes: 1` was
silently ignored (exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FLEET, REPO

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()
WORKLOAD = "name: chat\n{k}: 1\nprompt_tokens: {p50: 400}\noutput_tokens: {p50: 200}\nconcurrency: 4\n"
VALIDATE = ("validate", "specs", "--fleet", str(FLEET), "--offline")
ADVISE = ("advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory", "24GiB",
          "--offline")
SERVER = "contexts:\n  a:\n    server: http://127.0.0.1:9\n"
CONTEXT = ("validate", "specs", "--context", "a", "--offline")

BOOLEANS = "YAML 1.1 reads unquoted yes/no/on/off/true/false as booleans"
NUMBER = "YAML reads unquoted digits as a number"
NULL = "YAML reads an unquoted ~ or null as null"
KEYS = {  # written -> (what YAML read, why)
    **{word: ("a boolean", BOOLEANS) for word in ("yes", "No", "on", "OFF", "true", "False")},
    "7": ("a number", NUMBER), "-1.5": ("a number", NUMBER), "0x10": ("a number", NUMBER),
    "~": ("null", NULL), "null": ("null", NULL),
    "2024-01-01": ("a date", "YAML 1.1 reads an unquoted YYYY-MM-DD as a date"),
}
LIST_WHY = "YAML reads `? [..]` and `[..]:` as a list, `{..}:` as a mapping"

# file name -> text with the key line ({k}), the command, where the key is, its mapping and what its keys name
PLACES = {
    "fleet": ({"specs/a.yaml": SPEC, "fleet.yaml": "format_version: 1\n{k}: 1\nclusters: []\n"},
              ("validate", "specs", "--fleet", "fleet.yaml", "--offline"), "fleet.yaml:2:1", "the document",
              "a field name"),
    "fleet labels": ({"specs/a.yaml": SPEC, "fleet.yaml": "clusters:\n- name: c\n  workers:\n  - name: w\n    "
                      "labels:\n      {k}: x\n"}, ("validate", "specs", "--fleet", "fleet.yaml", "--offline"),
                     "fleet.yaml:6:7", "clusters.0.workers.0.labels", "a label name"),
    "workload": ({"w.yaml": WORKLOAD}, ADVISE, "w.yaml:2:1", "the document", "a field name"),
    "project": ({"specs/a.yaml": SPEC, "specs/gsg.yaml": "project: x\n{k}: 1\n"}, VALIDATE, "specs/gsg.yaml:2:1",
                "the document", "a field name"),
    "project globs": ({"specs/a.yaml": SPEC, "specs/gsg.yaml": "project: x\nper_path_ignores:\n  {k}: [GSG033]\n"},
                      VALIDATE, "specs/gsg.yaml:3:3", "per_path_ignores", "a path glob"),
    "contexts file": ({"specs/a.yaml": SPEC, "cfg.yaml": SERVER + "{k}: 1\n"}, CONTEXT, "cfg.yaml:4:1",
                      "the document", "a field name"),
    "context body": ({"specs/a.yaml": SPEC, "cfg.yaml": SERVER + "    {k}: 1\n"}, CONTEXT, "cfg.yaml:4:5",
                     "contexts.a", "a field name"),
    "soak workload": ({"sw.yaml": "- {prompt_tokens: 10, max_tokens: 5}\n- {k}: 1\n  prompt_tokens: 10\n"},
                      ("soak", "--url", "http://127.0.0.1:9", "--model", "m", "--workload", "sw.yaml"), "sw.yaml:2:3",
                      "item 1", "a field name"),
    "context name": ({"specs/a.yaml": SPEC, "cfg.yaml": SERVER + "  {k}: {server: http://x}\n"}, CONTEXT,
                     "cfg.yaml:4:3", "contexts", "a context name"),
}


def _write(root: Path, files: dict[str, str], key: str) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text.replace("{k}", key))


def _run(gsg, tmp_path, monkeypatch, place: str, key: str):
    files, args, *_ = PLACES[place]
    _write(tmp_path, files, key)
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    return gsg(*args, cwd=tmp_path)


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("key", sorted(KEYS))
def test_a_key_yaml_reads_as_no_text_is_one_line_at_the_key(gsg, tmp_path, monkeypatch, place, key):
    *_, where, parent, noun = PLACES[place]
    kind, why = KEYS[key]
    result = _run(gsg, tmp_path, monkeypatch, place, key)
    assert (result.code, result.err) == (1, f"gsg: error: {where}: a key of {parent} is {kind} (written '{key}'), "
                                            f"not {noun}: {why} (quote the key, or correct it)\n")


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("key, kind", [("[a]", "a list"), ("[1, [2]]", "a list"), ("{a: 1}", "a mapping")])
def test_a_list_or_mapping_as_a_key_is_one_line_at_the_key(gsg, tmp_path, monkeypatch, place, key, kind):
    # before: "a mapping key must be a plain value", naming neither the key nor what to do
    *_, where, parent, _ = PLACES[place]
    result = _run(gsg, tmp_path, monkeypatch, place, key)
    assert (result.code, result.err) == (1, f"gsg: error: {where}: a key of {parent} is {kind} (written '{key}'), "
                                            f"not a field name: {LIST_WHY} (quote the key, or correct it)\n")


def test_a_complex_key_is_named_where_its_question_mark_puts_it(gsg, tmp_path, monkeypatch):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / "fleet.yaml").write_text("clusters: []\n? [a, b]\n: 1\n")
    result = gsg("validate", "specs", "--fleet", "fleet.yaml", "--offline", cwd=tmp_path)
    assert (result.code, result.err) == (1, "gsg: error: fleet.yaml:2:3: a key of the document is a list (written "
                                            f"'[a, b]'), not a field name: {LIST_WHY} (quote the key, or correct it)\n")


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("key", ["'yes'", '"7"', "'~'", "'2024-01-01'", "yes_no", "on-call", "7a"])
def test_a_quoted_or_wordy_key_is_text(gsg, tmp_path, monkeypatch, place, key):
    # text keys are whatever they were before: a label, a glob or a context name, else an unknown field
    result = _run(gsg, tmp_path, monkeypatch, place, key)
    assert "a key of" not in result.err and "Keys should be strings" not in result.err, result.err
    if place in ("fleet labels", "project globs", "context name"):
        assert "unknown field" not in result.err and "Extra inputs" not in result.err, result.err


def test_the_overlay_finding_says_the_same(gsg, tmp_path):
    _write(tmp_path, {"specs/a.yaml": SPEC, "specs/overlays/p/a.yaml": "name: llama-8b\nOn: 1\n"}, "")
    result = gsg(*VALIDATE, "--overlay", "p", cwd=tmp_path)
    assert result.code == 1
    assert [line for line in result.out.splitlines() if " error " in line] == [
        "specs/overlays/p/a.yaml:2:1: error GSG002 schema [llama-8b]: a key of the document is a boolean (written "
        f"'On'), not a field name: {BOOLEANS}"]


def test_an_overlay_directive_beside_a_non_text_key_names_it(gsg, tmp_path):
    # before: "`$patch: delete` takes only `name:`; 'True' would have no effect"
    _write(tmp_path, {"specs/a.yaml": SPEC, "specs/overlays/p/a.yaml": "name: llama-8b\n$patch: delete\nyes: 1\n"}, "")
    result = gsg(*VALIDATE, "--overlay", "p", cwd=tmp_path)
    assert (result.code, result.err) == (1, "gsg: error: specs/overlays/p/a.yaml:3:1: a key of the document is a "
                                            f"boolean (written 'yes'), not a field name: {BOOLEANS} (quote the key, "
                                            "or correct it)\n")


@pytest.mark.parametrize("claims, says", [
    ("{3: 8GiB}", None), ('{"3": 8GiB}', None), ("\n      3: 8GiB", None),  # GPU indexes are numbers
    # before: yes was True, so GPU 1, silently
    ("{yes: 8GiB}", f"fleet.yaml:8:14: a key of clusters.0.instances.0.claims is a boolean (written 'yes'), not a GPU "
                    f"index: {BOOLEANS} (quote the key, or correct it)"),
    ("{~: 8GiB}", f"fleet.yaml:8:14: a key of clusters.0.instances.0.claims is null (written '~'), not a GPU index: "
                  f"{NULL} (quote the key, or correct it)"),
])
def test_a_claims_gpu_index_is_a_number_not_a_boolean(gsg, tmp_path, claims, says):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC)
    (tmp_path / "fleet.yaml").write_text(
        "clusters:\n- name: c\n  workers: [{name: w, gpus: [{index: 3, name: A, memory: {total: 24GiB}}]}]\n"
        f"  instances:\n  - model: m\n    worker: w\n    gpu_indexes: [3]\n    claims: {claims}\n")
    result = gsg("validate", "specs", "--fleet", "fleet.yaml", "--offline", cwd=tmp_path)
    if says is None:
        assert "gsg: error" not in result.err and "a key of" not in result.out, result.err  # the spec's findings
    else:
        assert (result.code, result.err) == (1, f"gsg: error: {says}\n")


@pytest.mark.parametrize("key", ["current_context", "'yes'", "context"])
def test_an_unknown_top_level_key_of_the_contexts_file_is_one_line(gsg, tmp_path, monkeypatch, key):
    # before: silently ignored (`current_context: a` chose no context)
    _write(tmp_path, {"specs/a.yaml": SPEC, "cfg.yaml": f"{key}: a\n" + SERVER}, "")
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "cfg.yaml"))
    result = gsg("config", "current-context", cwd=tmp_path)
    shown = key.strip("'")
    assert (result.code, result.err) == (1, f"gsg: error: cfg.yaml:1:1: unknown field '{shown}' (a contexts file "
                                            "holds current-context, contexts)\n")
