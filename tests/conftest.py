from dataclasses import dataclass
from pathlib import Path

import pytest
from support import EXPORT_FIXTURE, FLEET, REPO  # noqa: F401  (re-exported for fixtures)

from gpustack_guard.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def gsg(capsys, monkeypatch):
    """Run the real CLI in-process; returns exit code, stdout, stderr."""
    monkeypatch.setenv("GSG_OFFLINE", "1")  # tests never reach the hub
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GSG_OUTPUT", raising=False)

    def run(*args: str, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GSG_CACHE_DIR", str(tmp_path / "gsg-cache"))
    # never the developer's own hub cache or saved token
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                 "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GSG_URL", raising=False)
    monkeypatch.delenv("GSG_CONTEXT", raising=False)
    monkeypatch.setenv("GSG_CONFIG", str(tmp_path / "no-gsg-config.yaml"))  # never the developer's own contexts


@pytest.fixture(autouse=True)
def _registered_secrets_per_test(monkeypatch):
    """Secrets a command registers (the key, URL passwords, the spec values plan and apply send) last for its
    process: one command. Tests run many commands in one process; each starts with none registered."""
    import gpustack_guard.adapters.files.output as output

    monkeypatch.setattr(output, "_extra_secrets", [])


@pytest.fixture(autouse=True)
def slept(monkeypatch) -> list[float]:
    """Retry backoff of the CLI's client is recorded here instead of slept (the seconds asked for, in order)."""
    import gpustack_guard.wiring as wiring

    pauses: list[float] = []
    monkeypatch.setattr(wiring, "retry_sleep", pauses.append)
    return pauses


@pytest.fixture
def fake(monkeypatch):
    """The in-memory GPUStack (field-notes fleet) wired in as the CLI's server at http://gpustack.test."""
    from support.fake_gpustack import FakeGPUStack

    import gpustack_guard.wiring as connect

    server = FakeGPUStack.field_notes()
    monkeypatch.setattr(connect, "transport_factory", server.transport)
    monkeypatch.setenv("GSG_URL", "http://gpustack.test")
    monkeypatch.setenv("GSG_API_KEY", server.api_key)
    return server


@pytest.fixture
def specs(tmp_path, monkeypatch):
    """A private copy of the example specs (tests edit them), as the working directory's specs/; HF_TOKEN set."""
    import shutil

    target = tmp_path / "specs"
    shutil.copytree(REPO / "specs", target)
    monkeypatch.setenv("HF_TOKEN", "hf_test_secret_token_value")
    monkeypatch.chdir(tmp_path)
    return target


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """`--dist loadgroup` (pyproject's addopts) with pytest >= 9: pytest-xdist (3.8) names a test's xdist_group
    by a suffix on `item._nodeid`, but pytest 9 reads a node id from `item._id`, so every group fell apart
    without a word: each test its own unit, module-scoped fixtures built on both workers (the soak matrix
    twice, the soak CLI processes twice). Put the same suffix where pytest reads it."""
    if not getattr(config.option, "loadgroup", False):
        return
    _group_where_pytest_reads(items)
    # The groups hold the suite's long waits (the soak CLI's real processes, the soak matrix): handed out
    # first, each worker starts one while the other tests fill in behind it, instead of a group arriving last
    # on a worker that then waits alone. Stable, so the order stays identical on every worker.
    items.sort(key=lambda item: not any(item.iter_markers("xdist_group")))


def _group_where_pytest_reads(items):
    """Relies on pytest internals (`_pytest.nodeid.NodeId`, `item._id`). Where xdist's suffix already shows in
    the node id it changes nothing; where either internal is missing (an older or a newer pytest) it changes
    nothing either, so the suite still runs and passes, only without the groups."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return
    for item in items:
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = NodeId.parse(item.nodeid + suffix)
