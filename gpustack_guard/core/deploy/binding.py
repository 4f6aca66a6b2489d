"""Every write is bound to what it targets (pure): an answer or a re-read must be the model that was asked for.

A proxy, a cache or a buggy server can answer a request about one model with another one (a wrong id, another
name, another project's marker), and a race with another writer can leave two models of one name. Apply
checks each answer and each re-read with these functions and stops at the first mismatch, so one spec's
arguments never land on another deployment and a duplicate is never taken for success.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def mismatch(answer: Mapping[str, Any], *, name: str, model_id: int | None = None,
             marker: Mapping[str, str | None] | None = None, cluster_id: int | None = None) -> str | None:
    """Why `answer` is not the model named `name` (with id `model_id`, in cluster `cluster_id`, carrying `marker` in
    its meta), or None. A marker value of None means the key must be absent (a flag gsg cleared)."""
    if model_id is not None and answer.get("id") != model_id:
        return f"is model id {_shown(answer.get('id'))}, not {model_id}"
    if answer.get("name") != name:
        return f"is the model named {_shown(answer.get('name'))}, not {name!r}"
    if cluster_id is not None and answer.get("cluster_id") != cluster_id:
        return f"is in cluster id {_shown(answer.get('cluster_id'))}, not {cluster_id}"
    meta = answer.get("meta")
    meta = meta if isinstance(meta, Mapping) else {}
    for key, wanted in (marker or {}).items():
        if meta.get(key) != wanted:
            found = "no" if key not in meta else _shown(meta.get(key))
            expected = "none" if wanted is None else _shown(wanted)
            return f"carries {found} {key} in its meta, not {expected}"
    return None


def taken_id(answer_id: Any, name: str, known: Mapping[int, str]) -> str | None:
    """A create's answer must be a new model: an id that belonged to another model when the plan was made means
    the answer describes that model (a proxy cache, a misrouted request)."""
    other = known.get(answer_id) if isinstance(answer_id, int) else None
    if other is not None and other != name:
        return f"has the id of '{other}' (id {answer_id}), a model that existed before this create"
    return None


def named(models: Iterable[Mapping[str, Any]], name: str) -> list[Mapping[str, Any]]:
    """The models of exactly this name (a search answer is a case-insensitive substring match)."""
    return [m for m in models if m.get("name") == name]


def one_of_name(models: Iterable[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The only model of this name, None when there is none; two or more are a refusal (ValueError)."""
    found = named(models, name)
    if len(found) > 1:
        ids = ", ".join(str(m.get("id")) for m in found)
        raise ValueError(f"the server holds {len(found)} models named '{name}' (ids {ids})")
    return found[0] if found else None
