"""The llama-server build step: cached by version and flags, loud on failure (runs in the unit suite: no build,
no network; the commands it would run are replaced)."""

import llamacpp_build as build


def test_a_failed_step_exits_1_with_the_log_tail_and_leaves_no_binary(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GSG_IT_CACHE", str(tmp_path))

    def failing(cmd, log, timeout_s, cwd=None):
        log.write_text("line 1\ncmake: error: no compiler\n")
        raise build.BuildFailed("cmake -S src exited with 1")

    monkeypatch.setattr(build, "_run", failing)
    assert build.main() == 1
    err = capsys.readouterr().err
    assert "cmake: error: no compiler" in err
    assert f"llama-server build failed: cmake -S src exited with 1 (full log: {tmp_path}" in err
    assert not build.server_binary().exists() and not build.is_built()


def test_a_cached_binary_is_reused_only_for_the_same_pin_and_flags(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GSG_IT_CACHE", str(tmp_path))
    assert build.install_dir() == tmp_path / f"llama.cpp-{build.SDIST_VERSION}"
    build.server_binary().parent.mkdir(parents=True)
    build.server_binary().write_text("#!/bin/sh\n")
    assert not build.is_built()  # no stamp: a binary of unknown origin is rebuilt
    (build.install_dir() / "stamp").write_text(build._stamp())
    assert build.is_built()
    monkeypatch.setattr(build, "_run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rebuilt")))
    assert build.main() == 0 and "cached" in capsys.readouterr().out
    (build.install_dir() / "stamp").write_text(build._stamp().replace("-DGGML_NATIVE=OFF", "-DGGML_NATIVE=ON"))
    assert not build.is_built()  # other flags: another binary
