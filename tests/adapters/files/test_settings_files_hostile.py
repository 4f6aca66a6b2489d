"""A settings file (fleet snapshot, contexts, project, workload) repeating a key, a cluster, a worker or a GPU's
claim is one line naming file:line:column, as a spec's duplicate key is GSG001: YAML keeps only the last, so the
first would vanish without a word. And a project file linked out of its repository is not read, and a shared
API key file is warned about."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.files.contexts import load_contexts
from gpustack_guard.adapters.files.fleet_file import load_fleet
from gpustack_guard.adapters.files.project_file import parse_project_file
from gpustack_guard.adapters.files.workload_file import load_workload
from gpustack_guard.core.errors import GsgError

GPU = "{index: 0, memory: {total: 24GiB}}"
FLEET = f"format_version: 1\nclusters:\n  - name: prod\n    workers:\n      - name: w1\n        gpus:\n          - {GPU}\n"


def _refused(tmp_path, monkeypatch, loader, name: str, text: str) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    with pytest.raises(GsgError) as caught:
        loader(name)
    return str(caught.value)


DUPLICATE_KEYS = [
    ("top level", "format_version: 1\nformat_version: 1\nclusters: []\n",
     "fleet.yaml:2:1: key 'format_version' appears twice; YAML keeps only the last (remove one of them)"),
    ("a gpu's index", FLEET.replace(GPU, "{index: 0, index: 1, memory: {total: 24GiB}}"),
     "fleet.yaml:7:24: key 'clusters.0.workers.0.gpus.0.index' appears twice; YAML keeps only the last (remove one "
     "of them)"),
    ("a gpu's total", FLEET.replace("{total: 24GiB}", "{total: 24GiB, total: 80GiB}"),
     "fleet.yaml:7:47: key 'clusters.0.workers.0.gpus.0.memory.total' appears twice; YAML keeps only the last "
     "(remove one of them)"),
    ("two own keys after a merge", "x: &d {total: 24GiB}\n" + FLEET.replace("{total: 24GiB}", "{<<: *d, used: 1, used: 2}"),
     "fleet.yaml:8:50: key 'clusters.0.workers.0.gpus.0.memory.used' appears twice; YAML keeps only the last (remove "
     "one of them)"),
]


@pytest.mark.parametrize("text, message", [c[1:] for c in DUPLICATE_KEYS], ids=[c[0] for c in DUPLICATE_KEYS])
def test_a_fleet_file_repeating_a_key_is_refused_at_the_repeat(tmp_path, monkeypatch, text, message):
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", text) == message


def test_a_key_overriding_a_merged_one_is_plain_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.yaml").write_text(FLEET.replace("{total: 24GiB}", "{<<: {total: 24GiB, used: 1GiB}, used: 2GiB}"))
    memory = load_fleet("fleet.yaml").clusters[0].workers[0].gpus[0].memory
    assert (memory.total, memory.used) == (24 << 30, 2 << 30)


@pytest.mark.parametrize("text, message", [
    ("  Name: w2\n", "fleet.yaml:6:9: 'clusters.0.workers.0.Name': Extra inputs are not permitted"),
    ("  \"name \": w2\n", "fleet.yaml:6:9: 'clusters.0.workers.0.name ': Extra inputs are not permitted"),
], ids=["case", "trailing space"])
def test_a_key_differing_only_in_case_or_a_trailing_space_is_an_unknown_field(tmp_path, monkeypatch, text, message):
    fleet = FLEET.replace("      - name: w1\n", "      - name: w1\n      " + text)
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", fleet) == message


def test_two_workers_of_one_name_in_a_cluster_are_refused(tmp_path, monkeypatch):
    fleet = FLEET + f"      - name: w1\n        gpus:\n          - {GPU}\n"
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", fleet) == (
        "fleet.yaml:8:15: 'clusters.0.workers.1.name': worker 'w1' is listed twice in cluster 'prod' (workers 0 and "
        "1): its GPUs would hide each other")


def test_one_worker_name_in_two_clusters_is_two_workers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.yaml").write_text(FLEET + f"  - name: lab\n    workers:\n      - name: w1\n        gpus:\n"
                                                 f"          - {GPU}\n")
    assert [c.workers[0].name for c in load_fleet("fleet.yaml").clusters] == ["w1", "w1"]


def test_two_clusters_of_one_name_are_refused(tmp_path, monkeypatch):
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", FLEET + "  - name: prod\n    workers: []\n") == (
        "fleet.yaml:8:11: 'clusters.1.name': cluster 'prod' is listed twice (clusters 0 and 1): merge them or rename "
        "one")


def test_one_gpu_claimed_twice_under_a_number_and_a_text_key_is_refused(tmp_path, monkeypatch):
    fleet = FLEET + "    instances:\n      - {model: x, worker: w1, gpu_indexes: [0], claims: {0: 1GiB, \"0\": 2GiB}}\n"
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", fleet) == (
        "fleet.yaml:9:58: 'clusters.0.instances.0.claims': Value error, GPU index 0 is claimed twice")


def test_a_format_version_written_as_text_is_still_checked(tmp_path, monkeypatch):
    fleet = FLEET.replace("format_version: 1", "format_version: \"2\"")
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", fleet) == (
        "fleet.yaml:1:17: snapshot format_version 2 is newer than this gsg understands (1)")


CONTEXTS = "contexts:\n  prod:\n    server: https://gpustack.example.com\n    api-key-env: K\n"


@pytest.mark.parametrize("text, message", [
    (CONTEXTS + "  prod:\n    server: https://other.example.com\n",
     "config.yaml:5:3: key 'contexts.prod' appears twice; YAML keeps only the last (remove one of them)"),
    (CONTEXTS.replace("    api-key-env: K\n", "    server: https://other.example.com\n"),
     "config.yaml:4:5: key 'contexts.prod.server' appears twice; YAML keeps only the last (remove one of them)"),
], ids=["context", "server"])
def test_a_contexts_file_repeating_a_key_is_refused(tmp_path, monkeypatch, text, message):
    assert _refused(tmp_path, monkeypatch, lambda p: load_contexts(tmp_path / p), "config.yaml", text) == message


def test_a_project_file_repeating_a_key_is_refused(tmp_path, monkeypatch):
    assert _refused(tmp_path, monkeypatch, parse_project_file, "gsg.yaml", "project: a\nproject: b\n") == (
        "gsg.yaml:2:1: key 'project' appears twice; YAML keeps only the last (remove one of them)")


def test_a_workload_file_repeating_a_key_is_refused(tmp_path, monkeypatch):
    text = "name: chat\nprompt_tokens: 512\noutput_tokens: 128\nconcurrency: 4\nconcurrency: 64\n"
    assert _refused(tmp_path, monkeypatch, load_workload, "chat.yaml", text) == (
        "chat.yaml:5:1: key 'concurrency' appears twice; YAML keeps only the last (remove one of them)")


def test_a_project_file_linked_outside_the_repository_is_not_read(tmp_path, monkeypatch):
    # before: gsg read the target and echoed its first key ("unknown field 'secret_token'") in CI's log
    (tmp_path / "outside.yaml").write_text("secret_token: tok-123456\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "gsg.yaml").symlink_to(tmp_path / "outside.yaml")
    monkeypatch.chdir(repo)
    with pytest.raises(GsgError) as caught:
        parse_project_file("gsg.yaml")
    assert str(caught.value) == (f"gsg.yaml: a symbolic link to a file outside the repository ({repo.resolve()}): not "
                                 "read; a project file lies in the repository it configures")


def test_a_project_file_linked_inside_the_repository_is_read(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared.yaml").write_text("project: shop\n")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "gsg.yaml").symlink_to(tmp_path / "shared.yaml")
    monkeypatch.chdir(tmp_path)
    assert parse_project_file("specs/gsg.yaml").name == "shop"


@pytest.mark.parametrize("mode, warned", [(0o600, False), (0o400, False), (0o640, True), (0o644, True)])
def test_an_api_key_file_others_can_read_is_warned_about_like_ssh(tmp_path, capsys, mode, warned):
    from gpustack_guard.wiring import read_api_key

    key = tmp_path / "prod.key"
    key.write_text("gpustack_0123456789abcdef\n")
    key.chmod(mode)
    assert read_api_key(str(key)) == "gpustack_0123456789abcdef"
    expected = (f"gsg: warning: {key}: the API key file can be read by other users (mode {mode:04o}); chmod 600 it\n"
                if warned else "")
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize("name, message", [
    ('"prod "', "config.yaml:5: context name 'prod ' has surrounding whitespace or a control character"),
    ('"\\tprod"', "config.yaml:5: context name '\\tprod' has surrounding whitespace or a control character"),
    ('"p\\e[31mrod"', "config.yaml:5: context name 'p\\x1b[31mrod' has surrounding whitespace or a control character"),
    ('""', "config.yaml:5: a context name is empty"),
], ids=["trailing space", "leading tab", "escape sequence", "empty"])
def test_a_context_name_that_cannot_be_typed_as_shown_is_refused(tmp_path, monkeypatch, name, message):
    text = CONTEXTS + f"  {name}:\n    server: https://other.example.com\n"
    assert _refused(tmp_path, monkeypatch, lambda p: load_contexts(tmp_path / p), "config.yaml", text) == message


def test_context_names_differing_in_case_are_two_contexts(tmp_path):
    (tmp_path / "config.yaml").write_text(CONTEXTS + "  Prod:\n    server: https://other.example.com\n")
    assert sorted(load_contexts(tmp_path / "config.yaml").contexts) == ["Prod", "prod"]


@pytest.mark.parametrize("old, new, message", [
    ("name: prod", 'name: "prod "', "fleet.yaml:3:11: 'clusters.0.name': cluster name 'prod ' has surrounding "
                                    "whitespace or a control character"),
    ("name: prod", 'name: ""', "fleet.yaml:3:11: 'clusters.0.name': cluster name '' is empty"),
    ("name: w1", 'name: "w\\e[2J1"', "fleet.yaml:5:15: 'clusters.0.workers.0.name': worker name 'w\\x1b[2J1' has "
                                     "surrounding whitespace or a control character"),
], ids=["cluster trailing space", "empty cluster", "worker escape sequence"])
def test_a_fleet_name_that_matches_nothing_as_shown_is_refused(tmp_path, monkeypatch, old, new, message):
    assert _refused(tmp_path, monkeypatch, load_fleet, "fleet.yaml", FLEET.replace(old, new, 1)) == message


def test_a_fleet_name_of_other_scripts_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fleet.yaml").write_text(FLEET.replace("name: w1", "name: 工作站-1"), encoding="utf-8")
    assert load_fleet("fleet.yaml").clusters[0].workers[0].name == "工作站-1"


@pytest.mark.parametrize("before", [0o640, 0o644, 0o600])
def test_an_atomic_rewrite_keeps_the_files_permissions(tmp_path, before):
    from gpustack_guard.adapters.files.output import write_atomic

    target = tmp_path / "config.yaml"
    target.write_text("old\n")
    target.chmod(before)
    write_atomic(str(target), "new\n")
    assert (target.read_text(), target.stat().st_mode & 0o777) == ("new\n", before)


def test_an_atomic_write_of_a_new_file_has_the_umasks_permissions(tmp_path):
    import os

    from gpustack_guard.adapters.files.output import write_atomic

    mask = os.umask(0o027)
    try:
        write_atomic(str(tmp_path / "fleet.yaml"), "clusters: []\n")
    finally:
        os.umask(mask)
    assert (tmp_path / "fleet.yaml").stat().st_mode & 0o777 == 0o640
