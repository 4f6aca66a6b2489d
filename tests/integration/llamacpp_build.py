"""Build llama.cpp's `llama-server` for the integration tests, from the source a pinned PyPI sdist ships.

The prebuilt libllama wheels on PyPI need glibc 2.38 and our machines have 2.36, so CI compiles the server from
the llama.cpp tree vendored in llama-cpp-python's sdist (only that package's sdist: never `--no-binary :all:`).
The binary is cached by version under $GSG_IT_CACHE (default ~/.cache/gsg-it), so only the first run pays the
build (about 5 minutes on 2 cores). Run as a script: prints the binary's path, exit 1 with the build log's tail
on failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SDIST_PACKAGE = "llama-cpp-python"
SDIST_VERSION = "0.3.36"
# The llama.cpp commit llama-cpp-python 0.3.36 vendors (its CHANGELOG); the sdist has no .git to read it from.
LLAMA_CPP_COMMIT = "0c1e57098"
# Its release number is not in the sdist either; the commit is dated 2026-09-30, after tag b10507 (2026-08-20), so
# gsg is told b10507: every rule keyed by an earlier build applies to it.
LLAMA_CPP_BUILD_AT_LEAST = "b10507"
VENDORED_TREE = f"llama_cpp_python-{SDIST_VERSION}/vendor/llama.cpp"
CMAKE_FLAGS = (
    "-DGGML_NATIVE=OFF",  # a binary that runs on any x86-64 the cache is copied to
    "-DLLAMA_CURL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
    f"-DLLAMA_BUILD_COMMIT={LLAMA_CPP_COMMIT}",
)
BUILD_JOBS = 2  # the CI machine's cores
DOWNLOAD_TIMEOUT_S = 600
BUILD_TIMEOUT_S = 40 * 60  # well inside CI's 90 minutes even on a slow shared machine
LOG_TAIL_LINES = 40


def cache_root() -> Path:
    return Path(os.environ.get("GSG_IT_CACHE", Path.home() / ".cache" / "gsg-it"))


def install_dir() -> Path:
    return cache_root() / f"llama.cpp-{SDIST_VERSION}"


def server_binary() -> Path:
    return install_dir() / "bin" / "llama-server"


def _stamp() -> str:
    """What the cached binary was built from: a change of flags or pin rebuilds it."""
    return "\n".join((f"{SDIST_PACKAGE}=={SDIST_VERSION}", *CMAKE_FLAGS)) + "\n"


def is_built() -> bool:
    stamp = install_dir() / "stamp"
    return server_binary().is_file() and stamp.is_file() and stamp.read_text() == _stamp()


class BuildFailed(RuntimeError):
    pass


def _run(cmd: list[str], log: Path, timeout_s: float, cwd: Path | None = None) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        try:
            done = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise BuildFailed(f"{cmd[0]} {cmd[1]} took longer than {timeout_s:.0f} s") from exc
    if done.returncode != 0:
        raise BuildFailed(f"{' '.join(cmd[:3])} exited with {done.returncode}")


def _extract_vendored_tree(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name == VENDORED_TREE or m.name.startswith(VENDORED_TREE + "/")]
        if not members:
            raise BuildFailed(f"{sdist.name} has no {VENDORED_TREE}")
        archive.extractall(into, members=members, filter="data")
    return into / VENDORED_TREE


def build(log: Path) -> Path:
    """Download, configure and compile; the binary lands in the cache only when the build succeeded."""
    if is_built():
        return server_binary()
    install_dir().mkdir(parents=True, exist_ok=True)
    log.write_text("")
    with tempfile.TemporaryDirectory(prefix="gsg-llama-build-") as scratch_name:
        scratch = Path(scratch_name)
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
              "--no-binary", SDIST_PACKAGE, f"{SDIST_PACKAGE}=={SDIST_VERSION}", "-d", str(scratch)],
             log, DOWNLOAD_TIMEOUT_S)
        sdists = list(scratch.glob("*.tar.gz"))
        if len(sdists) != 1:
            raise BuildFailed(f"pip download left {len(sdists)} sdists, expected 1")
        source = _extract_vendored_tree(sdists[0], scratch / "src")
        build_dir = scratch / "build"
        _run(["cmake", "-S", str(source), "-B", str(build_dir), *CMAKE_FLAGS], log, BUILD_TIMEOUT_S)
        _run(["cmake", "--build", str(build_dir), "--target", "llama-server", f"-j{BUILD_JOBS}"], log, BUILD_TIMEOUT_S)
        built = build_dir / "bin" / "llama-server"
        if not built.is_file():
            raise BuildFailed(f"the build finished without {built.name}")
        server_binary().parent.mkdir(parents=True, exist_ok=True)
        staged = server_binary().with_suffix(".partial")
        shutil.copy2(built, staged)
        staged.replace(server_binary())  # atomic: a killed build never leaves a half binary behind
    (install_dir() / "stamp").write_text(_stamp())
    return server_binary()


def main() -> int:
    log = install_dir() / "build.log"
    started = time.monotonic()
    cached = is_built()
    try:
        binary = build(log)
    except (BuildFailed, OSError) as exc:
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:] if log.is_file() else []
        print("\n".join(tail), file=sys.stderr)
        print(f"llama-server build failed: {exc} (full log: {log})", file=sys.stderr)
        return 1
    how = "cached" if cached else f"built in {time.monotonic() - started:.0f} s"
    print(f"llama-server {SDIST_PACKAGE}=={SDIST_VERSION} (llama.cpp {LLAMA_CPP_COMMIT}) {how}: {binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
