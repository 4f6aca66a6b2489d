"""The typer-free validate path (gpustack_guard/quick_validate.py): its option table is the command typer builds
from cli.validate, every argument list it takes gives the options typer would give, everything else is left to
typer, and the console run of the quickstart imports no typer and prints what the typer path prints."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpustack_guard import cli
from gpustack_guard.commands import validate as validate_command
from gpustack_guard.console import quick_validate

ROOT = Path(__file__).resolve().parents[2]


def click_validate():
    return cli._click_command("validate").commands["validate"]


def test_the_option_table_is_the_command_typer_builds():
    params = {p.name: p for p in click_validate().params if p.name not in ("specs", "help")}
    ours = {o.field: o for o in quick_validate.OPTIONS if o is not quick_validate.ROOT_QUIET}
    typer_only = {name for p in params.values() for name in p.opts if name in quick_validate.TYPER_ONLY}
    assert typer_only == set(quick_validate.TYPER_ONLY)
    for name, param in params.items():
        if set(param.opts) & set(quick_validate.TYPER_ONLY):
            assert name not in ours
            assert param.envvar is None or param.envvar in quick_validate.TYPER_ONLY_ENV
            continue
        option = ours.pop(name)
        assert set(option.names) == set(param.opts) | set(param.secondary_opts), name
        assert option.takes_value is not param.is_flag, name
        assert option.repeatable is param.multiple, name
        assert option.envvar == param.envvar, name
        assert option.choices == tuple(getattr(param.type, "choices", ())), name
        default = param.default.value if isinstance(param.default, enum.Enum) else param.default
        assert quick_validate.DEFAULTS[name] == (list(default) if param.multiple else default), name
    assert ours == {}  # no option of ours that typer lacks
    root = {p.name: p for p in cli._click_command("validate").params}["quiet"]
    assert set(quick_validate.ROOT_QUIET.names) == set(root.opts) and root.envvar == quick_validate.ROOT_QUIET.envvar
    assert tuple(cli.GLOBAL_FLAGS) == ("-q", "--quiet")


def plain(value):
    """A dataclass tree as plain values (the options classes compare by identity)."""
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value.value if isinstance(value, enum.Enum) else value


@pytest.fixture
def captured(monkeypatch):
    """What each path hands commands.validate.run, and the quiet setting, without running a validation."""
    seen: list = []
    monkeypatch.setattr(validate_command, "run", lambda opts: seen.append(("options", plain(opts))) or 0)
    monkeypatch.setattr("gpustack_guard.adapters.files.output.set_quiet", lambda q: seen.append(("quiet", q)))
    return seen


TAKEN = [
    ["validate", "specs/"],
    ["validate", "specs/", "--fleet", "f.yaml", "--offline"],
    ["validate", "specs/", "--fleet=f.yaml", "--offline"],
    ["validate", "-f", "f.yaml", "specs/", "examples/"],
    ["validate", "specs/", "-o", "json"],
    ["validate", "specs/", "-o", "JSON", "--fail-level", "Warning"],
    ["validate", "specs/", "--output=sarif", "--fail-level=warning"],
    ["-q", "validate", "specs/"],
    ["validate", "specs/", "-q"],
    ["--quiet", "validate", "--quiet", "specs/"],
    ["validate", "specs/", "--templates", "t1", "--templates=t2", "--overlay", "prod"],
    ["validate", "specs/", "--report", "sarif=gsg.sarif", "--report", "junit=j.xml"],
    ["validate", "specs/", "--select", "GSG03,GSG020", "--ignore", "GSG033", "--ignore=GSG034, GSG035"],
    ["validate", "specs/", "--fleet", ""],
    ["validate", "validate"],
    ["validate", "a b.yaml", "spëcs/", "--offline", "--offline"],
]

LEFT_TO_TYPER = [
    [], ["validate"], ["validate", "--offline"], ["render", "specs/"], ["validate", "specs/", "--help"],
    ["validate", "-h"], ["--version"], ["--help", "validate", "specs/"], ["validate", "specs/", "--"],
    ["validate", "specs/", "--server", "http://127.0.0.1:1"], ["validate", "specs/", "--server-check"],
    ["validate", "specs/", "--context", "prod"], ["validate", "specs/", "--insecure"],
    ["validate", "specs/", "--api-key-file", "k"], ["validate", "specs/", "--ca-bundle", "ca.pem"],
    ["validate", "specs/", "-o", "bogus"], ["validate", "specs/", "-o", "ＪＳＯＮ"], ["validate", "specs/", "-ojson"],
    ["validate", "specs/", "-qf", "f.yaml"], ["validate", "specs/", "--fleet"], ["validate", "specs/", "--fleet", "-q"],
    ["validate", "specs/", "--fleet=-x"], ["validate", "specs/", "--fleet", "a", "--fleet", "b"],
    ["validate", "specs/", "--offline=1"], ["validate", "specs/", "--flet", "f"], ["validate", "-", "specs/"],
    ["-v", "validate", "specs/"], ["validate", "specs/", "--no-offline"],
]


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_an_argument_list_taken_here_gives_the_options_typer_gives(argv, captured, monkeypatch):
    for name in ("GSG_FLEET", "GSG_OUTPUT", "GSG_OFFLINE", "GSG_OVERLAY", "GSG_URL", "GSG_CONTEXT", "GSG_QUIET"):
        monkeypatch.delenv(name, raising=False)
    values = quick_validate.parse(argv, {})
    assert values is not None
    assert quick_validate.run(values) == 0
    ours = list(captured)
    captured.clear()
    assert cli.main(argv) == 0
    assert ours == captured
    assert [kind for kind, _ in ours] == ["quiet", "options"]


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_is_left_to_typer(argv):
    assert quick_validate.parse(argv, {}) is None


@pytest.mark.parametrize("name", ["GSG_FLEET", "GSG_OUTPUT", "GSG_OFFLINE", "GSG_OVERLAY", "GSG_URL", "GSG_CONTEXT",
                                  "GSG_QUIET", "_GSG_COMPLETE"])
def test_an_option_set_from_the_environment_is_left_to_typer(name):
    assert quick_validate.parse(["validate", "specs/"], {name: ""}) is None
    assert quick_validate.parse(["validate", "specs/"], {"GSG_API_KEY": "x", "HF_TOKEN": "y"}) is not None


def console(argv: list[str], typer_path: bool) -> subprocess.CompletedProcess:
    """A whole console run: `python -m gpustack_guard` (the quick path where it applies) or cli.entry (typer)."""
    code = "from gpustack_guard.cli import entry; entry()" if typer_path else \
        "import runpy; runpy.run_module('gpustack_guard', run_name='__main__')"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GSG_", "GITHUB_"))}
    watch = "import json, sys; sys.argv[1:] = json.loads(sys.argv[1]);"
    return subprocess.run([sys.executable, "-c", watch + code, json.dumps(argv)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv", [
    ["validate", "specs/", "--fleet", "examples/fleet.yaml", "--offline"],
    ["validate", "specs/", "examples/negative/", "--fleet", "examples/fleet.yaml", "--offline", "-o", "json"],
    ["validate", "examples/negative/", "--fleet", "examples/fleet.yaml", "--offline", "-q", "--fail-level", "warning"],
    ["validate", "specs/", "--fleet", "no-such-fleet.yaml", "--offline"],
    ["validate", "no-such-folder/", "--offline"],
], ids=lambda a: " ".join(a[1:3]))
def test_the_console_run_prints_what_the_typer_path_prints_without_importing_typer(argv):
    quick, typed = console(argv, typer_path=False), console(argv, typer_path=True)
    assert quick.returncode == typed.returncode
    assert quick.stdout == typed.stdout
    assert quick.stderr == typed.stderr


def test_the_console_quickstart_does_not_import_typer():
    probe = ("import runpy, sys, atexit; sys.argv[1:] = ['validate', 'specs/', '--fleet', 'examples/fleet.yaml', "
             "'--offline']; atexit.register(lambda: sys.stderr.write('typer=%s\\n' % ('typer' in sys.modules)));"
             "runpy.run_module('gpustack_guard', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("GSG_")})
    assert done.returncode == 0
    assert done.stderr.splitlines()[-1] == "typer=False"
    typed = subprocess.run([sys.executable, "-c", probe.replace("'--offline']", "'--offline', '--server-check']")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if not k.startswith("GSG_")})
    assert typed.stderr.splitlines()[-1] == "typer=True"
