"""`gsg advise --emit-specs` writes all or none and replaces a spec that differs only with --force, as `gsg export`
does: an advice run overwrote a hand-tuned spec of the same deployment name, exit 0."""

import os

from support import FLEET, REPO

CHAT = str(REPO / "workloads" / "chat.yaml")
ADVISE = ("advise", "-m", "meta-llama/Llama-3.3-70B-Instruct", "--fleet", str(FLEET), "--gpus",
          "gpu-a:cuda:0,gpu-a:cuda:1,gpu-a:cuda:2,gpu-a:cuda:3", "--backend-version", "0.11.0", "-w", CHAT)
SPEC = "llama-3.3-70b-instruct.yaml"


def test_a_second_run_writes_nothing_and_says_the_spec_is_current(gsg, tmp_path):
    out = tmp_path / "advised"
    first = gsg(*ADVISE, "--emit-specs", str(out))
    assert first.code == 0 and f"gsg: wrote {out / SPEC}" in first.err
    written = (out / SPEC).read_text()
    mtime = os.stat(out / SPEC).st_mtime_ns
    again = gsg(*ADVISE, "--emit-specs", str(out))
    assert again.code == 0
    assert "gsg: wrote" not in again.err
    assert f"gsg: 1 spec file(s) in {out} already current" in again.err.splitlines()
    assert (out / SPEC).read_text() == written and os.stat(out / SPEC).st_mtime_ns == mtime


def test_a_spec_that_differs_is_kept_unless_forced(gsg, tmp_path):
    out = tmp_path / "advised"
    out.mkdir()
    tuned = "name: llama-3.3-70b-instruct\n# the operator's own flags\n"
    (out / SPEC).write_text(tuned)
    refused = gsg(*ADVISE, "--emit-specs", str(out))
    assert refused.code == 1
    assert refused.err.splitlines()[-1] == (
        f"gsg: error: --emit-specs: would overwrite 1 changed file(s) ({out / SPEC}); pass --force to replace them; "
        "nothing written")
    assert (out / SPEC).read_text() == tuned and os.listdir(out) == [SPEC]  # no temporary file left either
    forced = gsg(*ADVISE, "--emit-specs", str(out), "--force")
    assert forced.code == 0 and f"gsg: wrote {out / SPEC}" in forced.err
    assert (out / SPEC).read_text().startswith("# yaml-language-server: $schema=")


def test_a_folder_of_the_specs_name_is_refused_in_one_line(gsg, tmp_path):
    out = tmp_path / "advised"
    (out / SPEC).mkdir(parents=True)
    result = gsg(*ADVISE, "--emit-specs", str(out), "--force")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"gsg: error: {out / SPEC}: exists and is not a regular file; refusing to replace it")
    assert (out / SPEC).is_dir()
