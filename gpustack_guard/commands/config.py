"""gsg config: list, show and switch the contexts of ~/.config/gsg/config.yaml, as `kubectl config` does.

Reading goes through the same loader as every command (so a file `use-context` accepts is one the others read);
`use-context` changes the one `current-context:` line in place and keeps every comment and key order.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from pathlib import Path

from gpustack_guard.adapters.files.contexts import ContextsFile, config_path, load_contexts
from gpustack_guard.adapters.files.output import note, out, write_atomic
from gpustack_guard.adapters.files.spec_loader import read_text
from gpustack_guard.adapters.files.yaml_dump import dump
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import EXIT_OK, GsgError
from gpustack_guard.core.secrets import mask_url
from gpustack_guard.reporters import TableFormat

# the value of the top-level current-context line; a comment after it stays
CURRENT_LINE = re.compile(r"^(current-context:[ \t]*)([^#\n]*?)([ \t]*(?:#[^\n]*)?)$", re.MULTILINE)
PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")  # written bare; anything else is quoted


def _contexts() -> ContextsFile:
    return load_contexts(config_path())


def get_contexts(output: TableFormat = TableFormat.TEXT) -> int:
    """Every context with its server (masked), the current one marked."""
    found = _contexts()
    rows = [{"current": name == found.current, "name": name, "server": mask_url(c.server),
             "overlay": c.overlay, "cluster": c.cluster} for name, c in sorted(found.contexts.items())]
    if output is TableFormat.JSON:
        out(json.dumps({"current_context": found.current, "contexts": rows}, indent=2) + "\n")
        return EXIT_OK
    width = max([len("NAME")] + [len(untrusted(r["name"])) for r in rows])
    lines = [f"CURRENT  {'NAME':<{width}}  SERVER"]
    lines += [f"{'*' if r['current'] else ' ':<7}  {untrusted(r['name']):<{width}}  {untrusted(r['server'])}"
              for r in rows]
    out("\n".join(lines) + "\n")
    return EXIT_OK


def current_context() -> int:
    found = _contexts()
    if not found.current:
        raise GsgError("no current-context is set (gsg config use-context NAME)", where=found.path)
    out(untrusted(found.current) + "\n")
    return EXIT_OK


def use_context(name: str) -> int:
    """Point current-context at NAME: the file is rewritten whole or not at all, through a symlink to its target."""
    path = config_path()
    found = load_contexts(path)
    found.get(name)  # an unknown name is one line naming the known ones
    target = os.path.realpath(path)
    text = read_text(Path(target))  # the loader's bounded UTF-8 read: a byte-order mark is not part of line 1
    value = _as_yaml_value(name)
    if CURRENT_LINE.search(text):
        updated = CURRENT_LINE.sub(lambda m: f"{m.group(1) or 'current-context: '}{value}{m.group(3)}", text, count=1)
    else:
        updated = f"current-context: {value}\n{text}"
    if _current_in(updated) != name:
        raise GsgError("could not set current-context without changing anything else; edit the file by hand",
                       where=found.path)
    write_atomic(target, updated)
    note(f"Switched to context \"{untrusted(name)}\".")
    return EXIT_OK


def _as_yaml_value(name: str) -> str:
    """NAME as current-context's value: bare when YAML reads it back as that string, else quoted (bare, `2024`,
    `on`, `null` or `2024-01-01` would read as a number, a boolean, null or a date, which names no context)."""
    if PLAIN_NAME.match(name) and _current_in(f"current-context: {name}\n") == name:
        return name
    return json.dumps(name)


def _current_in(text: str) -> str | None:
    """The current-context the text gives (parsed, not guessed): checked before the text replaces the file."""
    from gpustack_guard.adapters.files.yaml_documents import load_documents
    from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError

    try:
        docs = load_documents(text)
    except YamlSyntaxError:
        return None
    data = docs[0].data if docs else None
    return data.get("current-context") if isinstance(data, dict) else None


def view(output: TableFormat = TableFormat.TEXT) -> int:
    """The contexts as gsg reads them (paths resolved), server URLs masked; a key is never in the file."""
    found = _contexts()
    contexts = {}
    for name, context in sorted(found.contexts.items()):
        fields = {k.replace("_", "-"): v for k, v in asdict(context).items() if k != "name" and v not in (None, False)}
        fields["server"] = mask_url(context.server)
        contexts[name] = fields
    document = {"current-context": found.current, "contexts": contexts}
    if output is TableFormat.JSON:
        out(json.dumps(document, indent=2) + "\n")
    else:
        out(f"# {untrusted(found.path)}\n" + dump(document))
    return EXIT_OK
