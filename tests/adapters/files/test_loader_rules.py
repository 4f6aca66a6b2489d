"""GSG001, GSG017-GSG019 are emitted by the loader (the file and YAML edge), not by the core: exact location and
message, and the other files are still read."""

import os

import pytest

from gpustack_guard.adapters.files.spec_loader import MAX_SETTINGS_BYTES, MAX_SPEC_BYTES, load_specs
from gpustack_guard.core.rules.documents import EMPTY_SPEC, YAML_SYNTAX


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


SPEC = "name: fine\nsource: huggingface\nhuggingface_repo_id: Qwen/x\n"


def _found(tmp_path, monkeypatch, *paths):
    monkeypatch.chdir(tmp_path)
    docs, found = load_specs(list(paths) or ["."])
    return [d.file for d in docs], [(f.rule.id, str(f.location), f.message) for f in found]


@pytest.mark.parametrize("body", ["", "# only a comment\n", "---\n", "---\n# moved\n---\n...\n", "\ufeff"])
def test_a_file_without_a_document_is_gsg018(tmp_path, monkeypatch, body):
    (tmp_path / "empty.yaml").write_text(body, encoding="utf-8")
    (tmp_path / "fine.yaml").write_text(SPEC)
    files, found = _found(tmp_path, monkeypatch)
    assert files == ["fine.yaml"]
    assert found == [("GSG018", "empty.yaml:1:1", "no document in this file (empty, only comments or only `---`)")]
    assert EMPTY_SPEC.severity.value == "error"


def test_a_utf8_byte_order_mark_is_read(tmp_path, monkeypatch):
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + SPEC.encode())
    files, found = _found(tmp_path, monkeypatch)
    assert (files, found) == (["bom.yaml"], [])


def test_unreadable_files_are_gsg019_and_the_run_goes_on(tmp_path, monkeypatch):
    (tmp_path / "a-latin1.yaml").write_bytes(b"name: x\ndescription: caf\xe9\n")
    (tmp_path / "b-utf16.yaml").write_bytes(SPEC.encode("utf-16"))
    (tmp_path / "c-broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "d-loop.yaml").symlink_to(tmp_path / "d-loop.yaml")
    os.mkfifo(tmp_path / "e-fifo.yaml")  # opening it would block: never opened
    (tmp_path / "z-fine.yaml").write_text(SPEC)
    files, found = _found(tmp_path, monkeypatch)
    assert files == ["z-fine.yaml"]
    assert found == [
        ("GSG019", "a-latin1.yaml:2:1", "cannot be read: not UTF-8 text: byte 0xE9 at line 2 (save the file as UTF-8)"),
        ("GSG019", "b-utf16.yaml:1:1",
         "cannot be read: UTF-16 text (it starts with a UTF-16 byte-order mark): save it as UTF-8"),
        ("GSG019", "c-broken.yaml:1:1", f"cannot be read: broken symbolic link (to {tmp_path / 'nowhere.yaml'})"),
        ("GSG019", "d-loop.yaml:1:1", "cannot be read: symbolic link loop"),
        ("GSG019", "e-fifo.yaml:1:1", "cannot be read: not a regular file (a FIFO)"),
    ]


def test_a_broken_symlink_given_by_name_is_gsg019_not_a_crash(tmp_path, monkeypatch):
    (tmp_path / "gone.yaml").symlink_to("missing.yaml")
    files, found = _found(tmp_path, monkeypatch, "gone.yaml")
    assert (files, found) == ([], [("GSG019", "gone.yaml:1:1", "cannot be read: broken symbolic link (to missing.yaml)")])


def test_a_folder_named_like_a_spec_is_walked_as_a_folder(tmp_path, monkeypatch):
    (tmp_path / "x.yaml").mkdir()
    (tmp_path / "x.yaml" / "inner.yaml").write_text(SPEC)
    files, found = _found(tmp_path, monkeypatch)
    assert (files, found) == (["x.yaml/inner.yaml"], [])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permission bits")
def test_files_and_folders_without_read_permission_are_gsg019(tmp_path, monkeypatch):
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.yaml").write_text(SPEC)
    (tmp_path / "secret.yaml").write_text(SPEC)
    (tmp_path / "z-fine.yaml").write_text(SPEC)
    os.chmod(tmp_path / "locked", 0)
    os.chmod(tmp_path / "secret.yaml", 0)
    try:
        files, found = _found(tmp_path, monkeypatch)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert files == ["z-fine.yaml"]
    assert found == [("GSG019", "locked", "folder cannot be read: permission denied; its spec files are not checked"),
                     ("GSG019", "secret.yaml:1:1", "cannot be read: permission denied")]


def test_an_unlistable_folder_is_reported_also_as_root(tmp_path, monkeypatch):
    """Root ignores permission bits, so the listing error is made by the walk itself (os.walk's onerror)."""
    import gpustack_guard.adapters.files.spec_loader as loader

    real_walk = os.walk

    def walk(root, onerror=None, **kw):
        for folder, dirs, names in real_walk(root, onerror=onerror, **kw):
            if folder.endswith("locked"):
                onerror(PermissionError(13, "Permission denied", folder))
                dirs[:] = []
                continue
            yield folder, dirs, names

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "hidden.yaml").write_text(SPEC)
    (tmp_path / "z-fine.yaml").write_text(SPEC)
    monkeypatch.setattr(loader.os, "walk", walk)
    files, found = _found(tmp_path, monkeypatch)
    assert files == ["z-fine.yaml"]
    assert found == [("GSG019", "locked", "folder cannot be read: permission denied; its spec files are not checked")]


def test_a_spec_file_over_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    with open(tmp_path / "huge.yaml", "wb") as handle:
        handle.truncate(MAX_SPEC_BYTES + 1)  # NUL bytes: parsing would say GSG001, the size check comes first
    files, found = _found(tmp_path, monkeypatch)
    assert found == [("GSG017", "huge.yaml:1:1", "file of 16,777,217 bytes (limit 16,777,216): checked before parsing")]


def test_settings_files_share_the_limits(tmp_path, monkeypatch):
    from gpustack_guard.adapters.files.fleet_file import load_fleet
    from gpustack_guard.core.errors import GsgError

    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "fleet.yaml", "wb") as handle:
        handle.truncate(MAX_SETTINGS_BYTES + 1)
    with pytest.raises(GsgError) as caught:
        load_fleet("fleet.yaml")
    assert str(caught.value) == "fleet.yaml:1: file of 33,554,433 bytes (limit 33,554,432): checked before parsing"
    (tmp_path / "fleet.yaml").write_text("a: " + "[" * 70 + "]" * 70 + "\n")
    with pytest.raises(GsgError) as caught:
        load_fleet("fleet.yaml")
    assert str(caught.value) == "fleet.yaml:1:67: nested more than 64 levels deep"
    (tmp_path / "fleet.yaml").write_bytes(b"clusters: [\xff]\n")
    with pytest.raises(GsgError) as caught:
        load_fleet("fleet.yaml")
    assert str(caught.value) == "fleet.yaml: not UTF-8 text: byte 0xFF at line 1 (save the file as UTF-8)"


def test_the_loader_keeps_each_files_suppression_comments(tmp_path, monkeypatch):
    """Every file read has an entry, scanned from the text loaded: with comments, without, not YAML (its comments
    still count), not UTF-8 and too large (none); accept() then reads no spec file again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(SPEC + "replicas: 2  # gsg: ignore[GSG033] load test\n")
    (tmp_path / "b.yaml").write_text(SPEC)
    (tmp_path / "c.yaml").write_text("# gsg: ignore[GSG001] broken on purpose\nname: [x\n")
    (tmp_path / "d.yaml").write_bytes(b"name: \xff\n# gsg: ignore[GSG019] x\n")
    (tmp_path / "e.yaml").write_text("# gsg: ignore[GSG017] big\n" + "x" * MAX_SPEC_BYTES)
    comments: dict = {}
    load_specs(["."], comments=comments)
    assert {file: [(c.line, c.target, c.ids, c.reason) for c in found] for file, found in comments.items()} == {
        "a.yaml": [(4, 4, ("GSG033",), "load test")], "b.yaml": [],
        "c.yaml": [(1, 2, ("GSG001",), "broken on purpose")], "d.yaml": [], "e.yaml": []}


def test_overlay_patches_comments_are_kept_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text(SPEC)
    (tmp_path / "overlays" / "prod").mkdir(parents=True)
    (tmp_path / "overlays" / "prod" / "a.yaml").write_text("name: fine\nreplicas: 3  # gsg: ignore[GSG020] why\n")
    comments: dict = {}
    load_specs(["."], overlay="prod", comments=comments)
    assert {file: [(c.line, c.ids) for c in found] for file, found in comments.items()} == {
        "a.yaml": [], os.path.join("overlays", "prod", "a.yaml"): [(2, ("GSG020",))]}
