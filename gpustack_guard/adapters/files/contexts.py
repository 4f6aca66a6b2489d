"""Named GPUStack servers, like kubeconfig contexts: `~/.config/gsg/config.yaml` (or $GSG_CONFIG).

    current-context: staging
    contexts:
      prod:
        server: https://gpustack.prod.example.com
        api-key-env: GSG_PROD_API_KEY   # the name of a variable holding the key, or:
        api-key-file: ~/.config/gsg/prod.key
        ca-bundle: /etc/ssl/certs/prod-ca.pem
        cluster: default                # default --cluster of snapshot/export
        fleet: fleets/prod.yaml         # default --fleet of validate (relative to this file)
        overlay: prod                   # specs/overlays/prod is applied over the specs

A key itself is never written here: only where to read it from.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpustack_guard.adapters.files.regular_file import path_problem
from gpustack_guard.adapters.files.spec_loader import display_path, read_yaml_file
from gpustack_guard.core import echo
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.urls import bad_url
from gpustack_guard.core.values import frozen_value

# What a context holds, and what each field means (`gsg schema contexts` reads these too).
DESCRIPTIONS = {
    "server": "The GPUStack server's URL (http or https).",
    "api-key-env": "The name of the environment variable that holds the API key (never the key itself).",
    "api-key-file": "A file holding the API key; relative to this file.",
    "ca-bundle": "A PEM bundle of the certificate authorities the server's certificate is checked against.",
    "insecure": "Skip the certificate check (a test server with a self-signed certificate only).",
    "cluster": "The default --cluster of snapshot and export.",
    "fleet": "The default --fleet (a snapshot) of validate; relative to this file.",
    "overlay": "The overlay (SPECS/overlays/NAME) applied over the specs in this context.",
    "timeout": "Seconds a request may take.",
}
FIELDS = tuple(DESCRIPTIONS)
PATH_FIELDS = ("api-key-file", "ca-bundle", "fleet")
TEXT_FIELDS = ("server", "api-key-env", "api-key-file", "ca-bundle", "cluster", "fleet", "overlay")
TOP_FIELDS = ("current-context", "contexts")
MAX_TIMEOUT_SECONDS = 3600  # an hour for one request: beyond it, a server is down, not slow


@frozen_value(eq=True, repr=True)
class Context:
    name: str
    server: str
    api_key_env: str | None = None
    api_key_file: str | None = None
    ca_bundle: str | None = None
    insecure: bool = False
    cluster: str | None = None
    fleet: str | None = None
    overlay: str | None = None
    timeout: float | None = None


@frozen_value(eq=True, repr=True)
class ContextsFile:
    path: str
    contexts: dict[str, Context]
    current: str | None = None

    def get(self, name: str | None) -> Context:
        chosen = name or self.current
        if not chosen:
            raise GsgError("no context chosen: pass --context NAME (GSG_CONTEXT) or set current-context",
                           where=self.path)
        if chosen not in self.contexts:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise GsgError(f"no context '{chosen}' (known: {known})", where=self.path)
        return self.contexts[chosen]


def config_path(environ=os.environ) -> Path:
    if environ.get("GSG_CONFIG"):
        return Path(environ["GSG_CONFIG"]).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gsg" / "config.yaml"


def load_contexts(path: Path) -> ContextsFile:
    shown = display_path(path)
    docs = read_yaml_file(path, "no contexts file (write one, or set GSG_CONFIG)")
    data = docs[0].data if docs else None
    if not isinstance(data, dict) or not isinstance(data.get("contexts"), dict):
        raise GsgError("a contexts file is a mapping with `contexts:` (name -> server, key source, ...)",
                       where=f"{shown}:1")
    doc = docs[0]
    unknown = [k for k in data if k not in TOP_FIELDS]  # `current_context:` would be silently no context chosen
    if unknown:
        line, column = doc.position((unknown[0],), key=True)
        raise GsgError(f"unknown field '{echo.value(str(unknown[0]))}' (a contexts file holds "
                       f"{', '.join(TOP_FIELDS)})", where=f"{shown}:{line}:{column}")
    contexts = {}
    for name, body in data["contexts"].items():
        line, _ = doc.position(("contexts", name), key=True)
        where = f"{shown}:{line}"
        if not name:
            raise GsgError("a context name is empty", where=where)
        if name != name.strip() or not name.isprintable():  # `prod ` beside `prod`, or an escape sequence in
            # get-contexts: a name --context cannot be typed as it shows
            raise GsgError(f"context name '{echo.value(name)}' has surrounding whitespace or a control character",
                           where=where)
        if not isinstance(body, dict) or not isinstance(body.get("server"), str):
            raise GsgError(f"context '{name}' needs a `server:` URL", where=where)
        problem = bad_url(body["server"])
        if problem is not None:
            line, _ = doc.position(("contexts", name, "server"), key=True)
            raise GsgError(f"context '{name}': server {problem}", where=f"{shown}:{line}")
        unknown = sorted((k for k in body if k not in FIELDS), key=str)
        if unknown:
            line, _ = doc.position(("contexts", name, unknown[0]), key=True)
            raise GsgError(f"context '{name}': unknown field '{unknown[0]}' (known: {', '.join(FIELDS)})",
                           where=f"{shown}:{line}")
        for key in TEXT_FIELDS:  # a date, a list or a number where a path or a name goes is a mistake
            if key in body and not isinstance(body[key], str):
                line, column = doc.position(("contexts", name, key))
                raise GsgError(f"context '{name}': `{key}` must be text, not {_kind(body[key])}",
                               where=f"{shown}:{line}:{column}")
        if "insecure" in body and not isinstance(body["insecure"], bool):
            raise GsgError(f"context '{name}': `insecure` must be true or false", where=where)
        timeout = body.get("timeout", 1)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
                not 0 < timeout <= MAX_TIMEOUT_SECONDS:
            raise GsgError(f"context '{name}': `timeout` must be seconds between 0 and {MAX_TIMEOUT_SECONDS}",
                           where=where)
        for key in (*PATH_FIELDS, "overlay"):  # a NUL or an endless name: one line here, not an OS error later
            problem = path_problem(body[key]) if isinstance(body.get(key), str) else None
            if problem is not None:
                line, column = doc.position(("contexts", name, key))
                raise GsgError(f"context '{name}': `{key}` is not usable: {problem}", where=f"{shown}:{line}:{column}")
        values = {k.replace("-", "_"): v for k, v in body.items()}
        for key in PATH_FIELDS:
            field = key.replace("-", "_")
            if isinstance(values.get(field), str):
                values[field] = str((path.parent / Path(values[field]).expanduser()).resolve()) \
                    if not Path(values[field]).expanduser().is_absolute() else str(Path(values[field]).expanduser())
        contexts[str(name)] = Context(name=str(name), **values)
    current = data.get("current-context")
    if current is not None and not isinstance(current, str):
        line, column = doc.position(("current-context",))
        raise GsgError(f"`current-context` must be a context name, not {_kind(current)}",
                       where=f"{shown}:{line}:{column}")
    return ContextsFile(shown, contexts, current or None)


def _kind(value: object) -> str:
    return {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a mapping"}.get(
        type(value), f"a {type(value).__name__}")


CONTEXTS_SCHEMA_ID = "https://gpustack-guard.dev/schema/contexts-v1.json"


def contexts_schema() -> dict:
    """The JSON Schema (draft-07) of a contexts file, from the fields and limits load_contexts holds (whether a
    server URL parses, only the loader tells)."""
    kinds: dict[str, dict] = {key: {"type": "string"} for key in TEXT_FIELDS}
    kinds["server"] = {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}
    kinds["insecure"] = {"type": "boolean"}
    kinds["timeout"] = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_SECONDS}
    context = {"type": "object", "required": ["server"], "additionalProperties": False,
               "properties": {key: {**kinds[key], "description": DESCRIPTIONS[key]} for key in FIELDS}}
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$id": CONTEXTS_SCHEMA_ID,
            "title": "gpustack-guard contexts file (~/.config/gsg/config.yaml)",
            "description": "Named GPUStack servers, like kubeconfig contexts; a key is never written here.",
            "type": "object", "required": ["contexts"], "additionalProperties": False,
            "properties": {"current-context": {"type": "string", "description": "The context used when no "
                                               "--context, GSG_CONTEXT or --server is given."},
                           "contexts": {"type": "object", "additionalProperties": context,
                                        "description": "Context name -> server, key source and defaults."}}}
