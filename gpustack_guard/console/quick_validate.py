"""`gsg validate` without typer, for the plain runs CI makes (`gsg validate specs/ --fleet fleet.yaml --offline`).

Speed, confined to the console entry (issue 34): importing typer and building its command cost ~40 ms of a ~270 ms
quickstart on the 2-core VM (benchmarks/startup.py without httpx 1.49 -> 1.26; docs/performance.md, seventeenth
round). Only an argument list this module reads exactly as typer would is taken here; anything else (another
command, --help, a usage error, a connection option, an option set from the environment, shell completion) goes
to typer untouched, so what typer prints and refuses stays typer's. tests/cli/test_quick_validate.py holds the
option table to the command typer builds from cli.validate and compares both paths' options on many argument
lists.
"""

from __future__ import annotations

from typing import Mapping

from gpustack_guard.core.table_row import TableRow

COMMAND = "validate"


class Option(TableRow):  # a table row: tuple-built, no generated methods to compile
    """One option of `gsg validate` (or the root's --quiet) as cli.py declares it."""

    field: str  # the keyword of cli.validate it fills
    names: tuple[str, ...]
    takes_value: bool
    repeatable: bool = False
    choices: tuple[str, ...] = ()  # matched as click matches case-insensitive choices (casefold)
    envvar: str | None = None


ROOT_QUIET = Option("quiet", ("--quiet", "-q"), False, envvar="GSG_QUIET")
OPTIONS = (
    Option("fleet", ("--fleet", "-f"), True, envvar="GSG_FLEET"),
    Option("output", ("--output", "-o"), True,
           choices=("auto", "text", "json", "github", "sarif", "junit", "markdown", "gitlab", "html"),
           envvar="GSG_OUTPUT"),
    Option("fail_level", ("--fail-level",), True, choices=("error", "warning")),
    Option("offline", ("--offline",), False, envvar="GSG_OFFLINE"),
    Option("templates", ("--templates",), True, repeatable=True),
    Option("overlay", ("--overlay",), True, envvar="GSG_OVERLAY"),
    Option("report", ("--report",), True, repeatable=True),
    Option("select", ("--select",), True, repeatable=True),
    Option("ignore", ("--ignore",), True, repeatable=True),
    ROOT_QUIET,  # click reads it before the command only; cli._global_flags_first moves it there
)
# validate's options left to typer: a run naming one, or with one's variable set, is typer's
TYPER_ONLY = ("--server-check", "--server", "--api-key-file", "--ca-bundle", "--insecure", "--context")
TYPER_ONLY_ENV = ("GSG_URL", "GSG_CONTEXT")
DEFAULTS: dict[str, object] = {"fleet": None, "output": "auto", "fail_level": "error", "offline": False,
                               "templates": [], "overlay": None, "report": [], "select": [], "ignore": [],
                               "quiet": False}
_BY_NAME = {name: option for option in OPTIONS for name in option.names}
_ENVIRONMENT = tuple(o.envvar for o in OPTIONS if o.envvar) + TYPER_ONLY_ENV


def parse(argv: list[str], environ: Mapping[str, str]) -> dict | None:
    """validate's values (DEFAULTS' keys, and `specs`) when argv is a plain validate run read here exactly as
    typer reads it; None when typer must read it."""
    if any(name in environ for name in _ENVIRONMENT) or \
            any(k.startswith("_") and k.endswith("_COMPLETE") for k in environ):
        return None
    values: dict = {}
    specs: list[str] = []
    tokens = iter(argv)
    for token in tokens:  # up to the command: the root's --quiet only
        if token == COMMAND:
            break
        if token not in ROOT_QUIET.names:
            return None
        values["quiet"] = True
    else:
        return None
    for token in tokens:
        if not token.startswith("-"):
            specs.append(token)
            continue
        name, equals, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        option = _BY_NAME.get(name)
        if option is None:  # --help, --, -fX, -qo, a connection option, a typo: typer's
            return None
        if not option.takes_value:
            if equals:
                return None
            values[option.field] = True
            continue
        value = attached if equals else next(tokens, None)
        # a value that looks like an option, or is missing, is left to click's own reading and messages
        if value is None or value.startswith("-"):
            return None
        if option.choices:
            value = _choice(value, option.choices)
            if value is None:
                return None
        if option.repeatable:
            values.setdefault(option.field, []).append(value)
        elif option.field in values:  # given twice: click keeps the last; not worth a second reading here
            return None
        else:
            values[option.field] = value
    if not specs:
        return None
    return {**DEFAULTS, **values, "specs": specs}


def _choice(value: str, choices: tuple[str, ...]) -> str | None:
    """The choice a case-insensitive click.Choice converts value to; None for anything else (ASCII only:
    casefold and click's own normalisation agree there)."""
    if not value.isascii():
        return None
    folded = value.casefold()
    return next((choice for choice in choices if choice.casefold() == folded), None)


def run(values: dict) -> int:
    """cli.validate's body with the values typer would have passed (no connection option given)."""
    from gpustack_guard.adapters.files.output import set_quiet
    from gpustack_guard.commands.validate import options_from
    from gpustack_guard.commands.validate import run as run_validate
    from gpustack_guard.wiring import ConnectionOptions

    set_quiet(values["quiet"])  # what the root callback does
    return run_validate(options_from(values["specs"], values["fleet"], values["output"], values["fail_level"],
                                     values["offline"], values["templates"], values["overlay"], False,
                                     values["report"], values["select"], values["ignore"], ConnectionOptions()))
