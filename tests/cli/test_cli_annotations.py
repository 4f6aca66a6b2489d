"""typer reads every command's annotations when it builds the command line (each run): cli.py keeps them as
objects, not strings, so building it evaluates and compiles none (docs/performance.md, sixteenth round)."""

from __future__ import annotations

import typing

import typer.main

from gpustack_guard import cli


def _callbacks() -> list:
    found = [cli.app.registered_callback.callback] if cli.app.registered_callback else []
    apps = [cli.app] + [group.typer_instance for group in cli.app.registered_groups]
    for app in apps:
        found += [command.callback for command in app.registered_commands]
    return [f for f in found if f is not None]


def test_every_command_annotation_is_an_object_not_a_string():
    callbacks = _callbacks()
    assert len(callbacks) >= 17  # the callback, 16 commands and config's own
    quoted = {f"{f.__name__}.{name}" for f in callbacks for name, value in f.__annotations__.items()
              if isinstance(value, str)}
    assert not quoted


def test_building_the_command_line_compiles_no_forward_reference(monkeypatch):
    made = []
    original = typing.ForwardRef.__init__

    def counted(self, *args, **kwargs):
        made.append(args[0] if args else kwargs.get("arg"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(typing.ForwardRef, "__init__", counted)
    command = typer.main.get_command(cli.app)
    assert "validate" in command.commands  # type: ignore[attr-defined]
    assert made == []
