"""Differences a spec lets the live model keep (pure): `guard.ignore_differences`, and env secrets unset here.

Argo CD's `ignoreDifferences` for GPUStack documents. An ignored part is neither a change in plan nor drift, and
an update keeps its live value (GPUStack's PUT replaces the whole document: sending the spec's value would undo
what the other manager set). Entries name a field (`replicas`), one env key (`env.OTEL_ENDPOINT`) or one backend
flag (`backend_parameters.--max-num-seqs`).

An env value `${NAME}` whose variable is unset where gsg runs (a CI job without the secret) cannot be compared:
it keeps the live value too, so a missing secret is never reported as a change (apply still refuses to write it).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from gpustack_guard.core import args as A
from gpustack_guard.core.secrets import REFERENCE

ENV_PREFIX, ARGS_PREFIX = "env.", "backend_parameters."


def _flag_key(flag: str, family: str) -> str | None:
    try:
        parsed = A.parse([flag], family)
    except A.ArgError:
        return None
    return parsed[0].key if parsed else None


def keep_live(desired: Mapping[str, Any], live: Mapping[str, Any], ignored: Iterable[str],
              family: str) -> dict[str, Any]:
    """`desired` with every ignored part (and every unresolved `${NAME}` env value) taken from `live`."""
    result = dict(desired)
    env_keys: set[str] = set()
    flag_keys: set[str] = set()
    for entry in ignored:
        if entry.startswith(ENV_PREFIX):
            env_keys.add(entry[len(ENV_PREFIX):])
        elif entry.startswith(ARGS_PREFIX):
            key = _flag_key(entry[len(ARGS_PREFIX):], family)
            if key is not None:
                flag_keys.add(key)
        elif entry in live or entry in result:
            if entry in live:
                result[entry] = live[entry]
            else:
                result.pop(entry, None)
    env, live_env = result.get("env"), live.get("env") or {}
    if isinstance(env, dict) and isinstance(live_env, dict):
        # an unresolved secret compares equal to whatever live holds; a key live lacks is still missing
        env_keys |= {k for k, v in env.items() if isinstance(v, str) and REFERENCE.match(v) and k in live_env}
        if env_keys:
            result["env"] = _env_kept(env, live_env, env_keys)
    if flag_keys and isinstance(result.get("backend_parameters"), list):
        result["backend_parameters"] = _args_kept(result["backend_parameters"], live.get("backend_parameters"),
                                                  flag_keys, family)
    return result


def _env_kept(env: Mapping[str, str], live_env: Mapping[str, str], keys: set[str]) -> dict[str, str]:
    kept = {k: v for k, v in env.items() if k not in keys}
    kept.update({k: live_env[k] for k in keys if k in live_env})
    return kept


def _args_kept(desired: list[str], live: Any, keys: set[str], family: str) -> list[str]:
    try:
        ours = [a for a in A.parse(desired, family) if a.key not in keys]
        theirs = [a for a in A.parse(live if isinstance(live, list) else [], family) if a.key in keys]
    except A.ArgError:
        return desired  # unparsable lists are compared as they are (validate reports them)
    return A.render(ours + theirs)
