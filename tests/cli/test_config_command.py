"""gsg config: get-contexts, current-context, use-context, view (kubectl config's verbs), secrets masked."""

from __future__ import annotations

import json

import pytest

FILE = """\
# our GPUStack servers
current-context: staging   # what a bare `gsg plan` talks to
contexts:
  prod:
    server: https://admin:s3cr3t-pw@gpustack.prod.example.com/?token=gpustack_abc123def456
    api-key-env: PROD_KEY
    overlay: prod
  staging:
    server: http://staging.example.com:8080
"""


@pytest.fixture
def config(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text(FILE)
    monkeypatch.setenv("GSG_CONFIG", str(path))
    return path


def test_get_contexts_marks_the_current_one_and_masks_servers(gsg, config):
    result = gsg("config", "get-contexts")
    assert result.code == 0
    assert result.out.splitlines()[0] == "CURRENT  NAME     SERVER"
    assert result.out.splitlines()[2].startswith("*        staging  http://staging.example.com:8080")
    assert "s3cr3t-pw" not in result.out and "gpustack_abc123def456" not in result.out
    doc = json.loads(gsg("config", "get-contexts", "-o", "json").out)
    assert doc["current_context"] == "staging"
    assert [(c["name"], c["current"], c["overlay"]) for c in doc["contexts"]] == [("prod", False, "prod"),
                                                                               ("staging", True, None)]


def test_use_context_changes_only_that_line(gsg, config):
    result = gsg("config", "use-context", "prod")
    assert result.code == 0 and 'Switched to context "prod".' in result.err
    assert config.read_text() == FILE.replace("current-context: staging ", "current-context: prod ")
    assert gsg("config", "current-context").out == "prod\n"
    # and the other commands now talk to prod by default
    assert gsg("config", "get-contexts").out.splitlines()[1].startswith("*        prod")


def test_use_context_of_an_unknown_name_changes_nothing(gsg, config):
    result = gsg("config", "use-context", "produ")
    assert result.code == 1
    assert result.err.strip().endswith("no context 'produ' (known: prod, staging)")
    assert config.read_text() == FILE


def test_a_file_without_current_context_gets_the_line_and_odd_names_are_quoted(gsg, config):
    config.write_text("contexts:\n  team a: {server: 'http://a.example.com'}\n")
    assert gsg("config", "current-context").code == 1
    assert gsg("config", "use-context", "team a").code == 0
    assert config.read_text().startswith('current-context: "team a"\ncontexts:\n')
    assert gsg("config", "current-context").out == "team a\n"


def test_use_context_through_a_symlink_rewrites_the_target(gsg, config, tmp_path, monkeypatch):
    link = tmp_path / "link.yaml"
    link.symlink_to(config)
    monkeypatch.setenv("GSG_CONFIG", str(link))
    assert gsg("config", "use-context", "prod").code == 0
    assert link.is_symlink() and "current-context: prod " in config.read_text()


def test_view_shows_what_gsg_reads_without_secrets(gsg, config):
    result = gsg("config", "view")
    assert result.code == 0
    assert "s3cr3t-pw" not in result.out and "gpustack_abc123def456" not in result.out
    assert "current-context: staging" in result.out and "api-key-env: PROD_KEY" in result.out
    doc = json.loads(gsg("config", "view", "-o", "json").out)
    assert doc["contexts"]["prod"]["overlay"] == "prod" and "s3cr3t" not in json.dumps(doc)


def test_a_broken_contexts_file_is_one_line(gsg, config):
    config.write_text("contexts: [prod]\n")
    for verb in (["get-contexts"], ["current-context"], ["use-context", "prod"], ["view"]):
        result = gsg("config", *verb)
        assert result.code == 1 and len(result.err.strip().splitlines()) == 1 and "config.yaml" in result.err


@pytest.mark.parametrize("name", ["2024", "1.5", "0x1f", "1_000", "true", "on", "no", "null", "2024-01-01"])
def test_a_name_yaml_would_read_as_another_type_is_written_quoted(gsg, config, name):
    # Bare, these would read back as a number, a boolean, null or a date: the switch must still go through.
    config.write_text(f'current-context: staging\ncontexts:\n  "{name}": {{server: "http://a.example.com"}}\n'
                      '  staging: {server: "http://s.example.com"}\n')
    result = gsg("config", "use-context", name)
    assert (result.code, result.err) == (0, f'Switched to context "{name}".\n')
    assert config.read_text().splitlines()[0] == f'current-context: "{name}"'
    assert gsg("config", "current-context").out == f"{name}\n"


@pytest.mark.parametrize("name", ["prod-2", "team.a", "eu/west", "v1"])
def test_a_plain_name_stays_bare(gsg, config, name):
    config.write_text(f'contexts:\n  {name}: {{server: "http://a.example.com"}}\n')
    assert gsg("config", "use-context", name).code == 0
    assert config.read_text().splitlines()[0] == f"current-context: {name}"


def test_use_context_in_a_file_saved_with_a_byte_order_mark(gsg, config):
    # Editors on Windows save UTF-8 with a BOM; every loader accepts it, and so must the in-place rewrite,
    # also when current-context is the file's first line (behind the mark).
    body = FILE.split("\n", 1)[1]
    config.write_bytes(b"\xef\xbb\xbf" + body.encode())
    result = gsg("config", "use-context", "prod")
    assert (result.code, result.err) == (0, 'Switched to context "prod".\n')
    assert config.read_bytes() == body.replace("current-context: staging ", "current-context: prod ").encode()
