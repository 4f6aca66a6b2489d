"""gsg export: one file per deployment whatever the names (case, accents, characters a file name cannot hold,
reserved and overlong names), nothing overwritten unasked, and a summary that counts files written."""

import hashlib
import os

import pytest
import yaml

from gpustack_guard.commands.export import FILE_NAME_BYTES, STEM_CHARS, file_names, filename
from gpustack_guard.core.errors import GsgError


def digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:12]


@pytest.mark.parametrize("name,stem", [
    ("llama-70b", "llama-70b"),
    ("Qwen2.5 32B/Instruct", "Qwen2.5-32B-Instruct"),
    ("café", "cafe"),  # accents folded
    ("cafe\u0301", "cafe"),  # ... whichever normalisation form the server sent
    ("ｆｕｌｌｗｉｄｔｈ", "fullwidth"),  # compatibility forms folded too
    ("..", "model"),
    ("/", "model"),
    ("../../etc/passwd", "etc-passwd"),
    (".hidden", "hidden"),
    ("通义千问", "model"),
    ("", "model"),
    ("CON", "model-CON"),  # reserved on Windows, in any case and with any extension
    ("nul.txt", "model-nul.txt"),
    ("com1", "model-com1"),
    ("console", "console"),
    ("a\x1b[2J\nb", "a-2J-b"),
])
def test_a_name_becomes_a_portable_stem(name, stem):
    assert filename(name) == stem


def test_a_long_name_is_cut_to_fit_the_file_name_limit():
    assert filename("x" * 10_000) == "x" * STEM_CHARS
    assert filename("x" * (STEM_CHARS - 1) + "-" + "y" * 50) == "x" * (STEM_CHARS - 1)  # no trailing '-'
    longest = file_names(["x" * 300, "x" * 301])  # cut to one stem: both get a digest
    assert all(len(f.encode()) <= FILE_NAME_BYTES for f in longest.values())
    assert len(set(longest.values())) == 2


def test_names_that_share_a_file_all_get_their_own_digest():
    decomposed = "cafe\u0301"
    names = ["Foo", "foo", "FOO", "café", decomposed, "cafe", "bar"]
    assert file_names(names) == {
        "Foo": f"Foo-{digest('Foo')}.yaml", "foo": f"foo-{digest('foo')}.yaml", "FOO": f"FOO-{digest('FOO')}.yaml",
        "café": f"cafe-{digest('café')}.yaml", decomposed: f"cafe-{digest(decomposed)}.yaml",
        "cafe": f"cafe-{digest('cafe')}.yaml", "bar": "bar.yaml"}


def test_file_names_do_not_depend_on_the_order_the_server_lists_models_in():
    names = ["a/b", "a b", "a-b", "c"]
    assert file_names(names) == file_names(list(reversed(names)))


def test_names_that_still_share_a_file_are_refused():
    crafted = f"foo-{digest('Foo')}"  # a name spelled like another's digest form
    with pytest.raises(GsgError) as refused:
        file_names(["Foo", "foo", crafted])
    assert str(refused.value) == (f"2 model(s) map to the same file name ('Foo' and '{crafted}'); nothing written "
                                  "(export them one cluster at a time, or rename one)")
    with pytest.raises(GsgError, match=r"^2 model\(s\) map to the same file name \('m\\n' and 'm\\n'\)"):
        file_names(["m\n", "m\n"])  # a server that lists one name twice


def test_export_of_colliding_names_writes_every_file_and_counts_them(gsg, fake, tmp_path):
    for name in ("Model", "model", "mod/el"):
        fake.create_unmanaged(name)
    out = tmp_path / "out"
    first = gsg("export", "--out", str(out))
    assert first.code == 0, first.err
    files = sorted(os.listdir(out))
    assert files == sorted([f"Model-{digest('Model')}.yaml", f"model-{digest('model')}.yaml", "mod-el.yaml"])
    assert {yaml.safe_load((out / f).read_text())["name"] for f in files} == {"Model", "model", "mod/el"}
    assert first.err.splitlines()[-1] == (f"gsg: exported 3 deployment(s) to {out}: 3 file(s) written "
                                          "(secret env values written as ${NAME} references)")
    again = gsg("export", "--out", str(out))
    assert again.code == 0 and again.err.splitlines()[-1].startswith(
        f"gsg: exported 3 deployment(s) to {out}: 0 file(s) written, 3 unchanged")


def test_export_never_overwrites_a_changed_file_unasked_and_writes_nothing_then(gsg, fake, tmp_path):
    fake.create_unmanaged("a")
    fake.create_unmanaged("b")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.yaml").write_text("# my own edits\n")
    refused = gsg("export", "--out", str(out))
    assert refused.code == 1
    assert refused.err.splitlines()[-1] == (f"gsg: error: would overwrite 1 changed file(s) ({out / 'a.yaml'}); "
                                            "pass --force to replace them")
    assert sorted(os.listdir(out)) == ["a.yaml"] and (out / "a.yaml").read_text() == "# my own edits\n"
    forced = gsg("export", "--out", str(out), "--force")
    assert forced.code == 0 and "2 file(s) written" in forced.err
    assert yaml.safe_load((out / "a.yaml").read_text())["name"] == "a"


@pytest.mark.parametrize("kind", ["folder", "fifo", "symlink"])
def test_export_refuses_to_replace_what_is_not_a_regular_file(gsg, fake, tmp_path, kind):
    fake.create_unmanaged("a")
    out = tmp_path / "out"
    out.mkdir()
    target = out / "a.yaml"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)  # reading it would wait forever
    else:
        (tmp_path / "elsewhere.yaml").write_text("x\n")
        target.symlink_to(tmp_path / "elsewhere.yaml")
    result = gsg("export", "--out", str(out), "--force")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (f"gsg: error: {target}: exists and is not a regular file; refusing to "
                                           "replace it")


def test_export_out_must_be_a_folder(gsg, fake, tmp_path):
    fake.create_unmanaged("a")
    (tmp_path / "file").write_text("x\n")
    result = gsg("export", "--out", str(tmp_path / "file"))
    assert result.code == 1 and result.err == f"gsg: error: {tmp_path / 'file'}: --out must be a folder\n"
