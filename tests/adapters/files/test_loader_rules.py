"""GSG001 is emitted by the loader (the YAML edge), not by the core: exact location and message."""

from gpustack_guard.adapters.files.spec_loader import load_specs
from gpustack_guard.core.rules.documents import YAML_SYNTAX


def test_unclosed_flow_sequence_is_gsg001(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.yaml").write_text("name: broken\nsource: huggingface\nhuggingface_repo_id: [Qwen/x\n"
                                          "backend: vLLM\n")
    (tmp_path / "fine.yaml").write_text("name: fine\nsource: huggingface\nhuggingface_repo_id: Qwen/x\n")
    docs, found = load_specs(["."])
    assert [(f.rule, str(f.location), f.message, f.severity.value) for f in found] == [
        (YAML_SYNTAX, "broken.yaml:3:22",
         "'[' opened here is not closed (did not find expected ',' or ']' at line 4, column 8)", "error")]
    assert [d.file for d in docs] == ["fine.yaml"]


def test_valid_yaml_has_no_gsg001(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("name: a\n---\nname: b\n")
    docs, found = load_specs(["."])
    assert found == [] and [d.name for d in docs] == ["a", "b"]
