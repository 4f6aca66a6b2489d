"""Server text is data (issue 31): whatever a server puts in a name, a state message, a version or a meta value,
no output format writes an escape sequence, carriage return or bidi control raw, no written YAML gains a key the
server chose, and export writes one file per model under a name no other model shares."""

import json

import yaml

from gpustack_guard.commands.export import file_names

HOSTILE = "\x1b]0;owned\x07\x1b[2J\rgone\u202eevil\x9b31m"
RAW = ("\x1b", "\r", "\u202e", "\x9b", "\x07")


def _clean(*texts: str) -> None:
    for text in texts:
        assert not any(c in text for c in RAW), repr(text[:200])


def test_nothing_a_server_says_reaches_the_screen_raw(gsg, fake, specs):
    fake.create_unmanaged("stranger" + HOSTILE, description=HOSTILE, meta={"note": HOSTILE})
    for inst in fake.instances.values():
        inst["state"], inst["state_message"] = "error", HOSTILE
    fake.version = "v2.3.0"
    runs = [gsg("plan", str(specs)), gsg("plan", str(specs), "--output", "json"), gsg("drift", str(specs)),
            gsg("drift", str(specs), "--output", "json"), gsg("drift", str(specs), "--output", "markdown"),
            gsg("snapshot"), gsg("validate", str(specs), "--server-check", "--output", "sarif")]
    for result in runs:
        _clean(result.out, result.err)
    json.loads(runs[1].out)  # JSON on stdout stays JSON: the escape is JSON's own \\uXXXX
    assert "stranger\\x1b]0;owned\\x07\\x1b[2J\\rgone\\u202eevil\\x9b31m" in runs[2].out  # shown, escaped


def test_a_version_with_newlines_is_one_error_line(gsg, fake, tmp_path):
    fake.version = "v2.3.0\nrun_command: evil\nenv: {LD_PRELOAD: /tmp/x.so}"
    result = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
    assert result.code == 1 and len(result.err.splitlines()) == 1 and "v2.3.0\\nrun_command" in result.err
    assert not (tmp_path / "fleet.yaml").exists()


def test_meta_with_newlines_adds_no_key_to_written_yaml(gsg, fake, tmp_path):
    fake.create_unmanaged("odd", meta={"gsg.dev/managed-by": "gsg/0.1\nrun_command: evil",
                                       "gsg.dev/project": "p\nenv: {LD_PRELOAD: x}", "gsg.dev/spec": "s.yaml"})
    snap = gsg("snapshot", "--out", str(tmp_path / "fleet.yaml"))
    assert snap.code == 0, snap.err
    text = (tmp_path / "fleet.yaml").read_text()
    assert set(yaml.safe_load(text)) == {"clusters", "format_version"} or "run_command" not in yaml.safe_load(text)
    assert all(line.startswith("#") for line in text.splitlines()[:2])
    exported = gsg("export", "--out", str(tmp_path / "out"))
    assert exported.code == 0, exported.err
    for path in (tmp_path / "out").glob("*.yaml"):
        document = yaml.safe_load(path.read_text())
        assert "run_command" not in document and "LD_PRELOAD" not in (document.get("env") or {}), path


def test_export_names_never_collide_and_count_what_was_written(gsg, fake, tmp_path):
    for name in ("Qwen/7b", "qwen-7b", "QWEN_7B".replace("_", "-"), "qwen 7b"):
        fake.create_unmanaged(name)
    result = gsg("export", "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    files = sorted(p.name for p in (tmp_path / "out").glob("*.yaml"))
    assert len(files) == len(fake.models) == 4
    assert len({f.lower() for f in files}) == 4  # also on a case-insensitive file system
    assert f"gsg: exported 4 deployment(s) to {tmp_path / 'out'}" in result.err
    names = {yaml.safe_load((tmp_path / "out" / f).read_text())["name"] for f in files}
    assert names == {m["name"] for m in fake.models.values()}


def test_file_names_are_stable_bounded_and_unique():
    names = ["a/b", "a-b", "A-B", "..", "/", "x" * 300, "ok"]
    stems = file_names(names)
    assert stems["ok"] == "ok.yaml" and file_names(["ok"])["ok"] == "ok.yaml"
    assert len({s.lower() for s in stems.values()}) == len(names)
    assert all(0 < len(s.encode()) <= 255 and "/" not in s and not s.startswith(".") for s in stems.values())
    assert file_names(names) == stems  # the same name, the same file, every time
