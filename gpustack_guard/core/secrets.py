"""Which values are secrets, masking them, and `${NAME}` references resolved from the environment (pure).

What counts as a secret, broadly (a value masked by mistake costs a look at the spec; one printed by mistake
costs a rotated credential):
- every env value read from the process environment (`${NAME}`), whatever its name;
- env values whose name has a secret-looking word (KEY, TOKEN, PASS, SECRET, CREDENTIAL, AUTH, PRIVATE, CERT,
  BEARER, HF_... but not huggingface_hub's folder and switch settings such as HF_HOME), or whose value looks
  like one (a URL with a password, a `Bearer ...` header, a known token prefix such as `hf_` or `sk-`);
- backend arguments named like one (`--hf-token`, `--api-key`, `--token`, `--password`);
- any env name or flag the spec lists in `guard.secrets`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import AbstractSet, Iterable, Mapping

MASK = "********"
REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")

# In an env name's parts (split at '_', '-', '.'): a part containing one of these, or ending in one of the
# others (so TOKENIZERS_PARALLELISM and PASSTHROUGH are not secrets, LICENSEKEY and DB_PASS are).
_CONTAINS = ("SECRET", "PASSW", "CREDENTIAL", "PRIVATE", "BEARER", "AUTH", "CERT")
_ENDS = ("KEY", "KEYS", "TOKEN", "TOKENS", "PASS", "PASSPHRASE")
# A flag's words (split at '-'): only whole words, since --max-num-batched-tokens and --tokenizer are not secrets.
_FLAG_WORDS = {"token", "key", "apikey", "secret", "password", "passwd", "pass", "passphrase", "credential",
               "credentials", "auth", "bearer", "private"}
# huggingface_hub's own settings that are folders and switches, not credentials (HF_TOKEN_PATH names where the
# token is, not the token): masking them would hide the hub cache's path in every message naming it.
_HF_SETTINGS = {"HF_HOME", "HF_HUB_CACHE", "HF_ASSETS_CACHE", "HF_XET_CACHE", "HF_TOKEN_PATH", "HF_HUB_OFFLINE",
                "HF_HUB_DISABLE_SYMLINKS", "HF_HUB_DISABLE_TELEMETRY", "HF_HUB_ENABLE_HF_TRANSFER"}
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
_TOKEN_VALUE = re.compile(r"^(Bearer\s+\S|hf_[A-Za-z0-9]{8}|sk-[A-Za-z0-9_-]{8}|gh[pousr]_[A-Za-z0-9]{8}|"
                          r"github_pat_|glpat-|xox[abposr]-|AKIA[0-9A-Z]{12})")


def is_secret_key(key: str) -> bool:
    """Whether an env name says its value is a secret."""
    upper = key.upper()
    if upper in _HF_SETTINGS:
        return False
    if upper.startswith("HF_") and "ENDPOINT" not in upper:
        return True
    for part in re.split(r"[_.\-]+", upper):
        if any(word in part for word in _CONTAINS) or any(part.endswith(word) for word in _ENDS):
            return True
    return False


def is_secret_value(value: str) -> bool:
    """Whether a value looks like a credential whatever its name: a URL with a password, a token."""
    return bool(_URL_PASSWORD.search(value) or _TOKEN_VALUE.match(value.strip()))


@lru_cache(maxsize=4096)  # a few hundred distinct flags, asked for every argument of every spec
def _flag_named_like_secret(name: str) -> bool:
    return bool(set(name.replace("_", "-").split("-")) & _FLAG_WORDS)


def is_secret_flag(key: str, extra: Iterable[str] = ()) -> bool:
    """Whether a backend argument (with or without dashes) carries a secret."""
    name = key.lstrip("-").lower()
    return _flag_named_like_secret(name) or bool(extra) and name in {e.lstrip("-").lower() for e in extra}


def extra_names(listed: Iterable[str]) -> tuple[set[str], set[str]]:
    """(env names, flag names) of a spec's `guard.secrets`: entries starting with '-' are flags."""
    listed = list(listed)
    return ({n for n in listed if not n.startswith("-")}, {n.lstrip("-") for n in listed if n.startswith("-")})


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str],
                extra: Iterable[str] = ()) -> tuple[dict[str, str], set[str], list[str]]:
    """(resolved env, keys holding secrets, names of unresolved references).

    A value written as `${NAME}` is read from the environment at render time and always counts as a secret.
    """
    extra = set(extra)
    resolved, secret, missing = {}, set(), []
    for key, value in env.items():
        match = REFERENCE.match(value)
        if match:
            secret.add(key)
            if match.group(1) in environ:
                resolved[key] = environ[match.group(1)]
            else:
                resolved[key] = value
                missing.append(match.group(1))
            continue
        resolved[key] = value
        if key in extra or is_secret_key(key) or is_secret_value(value):
            secret.add(key)
    return resolved, secret, missing


def masked(env: Mapping[str, str], secret_keys: AbstractSet[str]) -> dict[str, str]:
    """Env with secrets masked: the keys known to hold one, and any the broad rule catches (a live model's env
    may hold keys no spec declares)."""
    return {k: (MASK if k in secret_keys or is_secret_key(k) or is_secret_value(str(v)) else v)
            for k, v in env.items()}


def _split_flag(item: str) -> tuple[str, str | None]:
    name, sep, value = item.partition("=")
    return name, (value if sep else None)


def mask_args(params: list[str] | None, extra: Iterable[str] = ()) -> list[str] | None:
    """backend_parameters with the values of secret flags masked, in both `--flag=value` and `--flag value`
    forms; everything else as it was."""
    if params is None:
        return None
    extra = list(extra)
    result, hide_next = [], False
    for item in params:
        text = str(item)
        if hide_next and not text.startswith("-"):
            result.append(MASK)
            hide_next = False
            continue
        hide_next = False
        name, value = _split_flag(text)
        if text.startswith("-") and is_secret_flag(name, extra):
            if value is None:
                hide_next = True
                result.append(text)
            else:
                result.append(f"{name}={MASK}")
            continue
        result.append(text)
    return result


def secret_arg_values(params: list[str] | None, extra: Iterable[str] = ()) -> list[str]:
    """The values mask_args hides, for scrubbing them from any text printed."""
    if not params:
        return []
    extra = tuple(extra)
    if not any(str(p).startswith("-") and is_secret_flag(_split_flag(str(p))[0], extra) for p in params):
        return []  # the common case: nothing to hide
    masked_params = mask_args(params, extra) or []
    found = []
    for original, shown in zip(params, masked_params):
        if original != shown:
            found.append(_split_flag(str(original))[1] if shown.endswith(f"={MASK}") else str(original))
    return [v for v in found if v]


PREFIX_CHARS = 12  # a proxy that echoes a secret cut short still shows this much of it: masked as well


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _percent_encoded(value: str, space: str = "%20") -> str:
    """RFC 3986 percent-encoding of every byte but the unreserved ones (the query form writes space as '+')."""
    return "".join(chr(b) if b in _UNRESERVED else space if b == 0x20 else f"%{b:02X}"
                   for b in value.encode("utf-8", "replace"))


def _forms(value: str) -> set[str]:
    """The shapes a secret takes when something echoes it back: as is, JSON-escaped, URL-encoded, base64 (HTTP
    Basic auth of `user:password`), and a long prefix (an echo cut at a length limit)."""
    import base64
    import json as _json

    forms = {value, _json.dumps(value)[1:-1], _percent_encoded(value), _percent_encoded(value, "+"),
             base64.b64encode(value.encode("utf-8", "replace")).decode("ascii").rstrip("=")}
    if len(value) >= PREFIX_CHARS + 4:
        forms.add(value[:PREFIX_CHARS])
    return forms


@lru_cache(maxsize=64)
def _replacements(secrets: frozenset[str]) -> tuple[str, ...]:
    found = {form for v in secrets if v and len(v) >= 4 for form in _forms(v) if len(form) >= 4}
    return tuple(sorted(found, key=len, reverse=True))


def scrub(text: str, secrets: list[str]) -> str:
    """Remove known secret values, in every shape an echo gives them, from any text before it is printed or
    written (defence in depth)."""
    for value in _replacements(frozenset(secrets)):
        if value in text:
            text = text.replace(value, MASK)
    return text


# Query parameters whose value is a credential: signed URLs (S3, GCS, Azure SAS), token-in-URL endpoints.
_QUERY_SECRET_WORDS = ("token", "key", "secret", "password", "passwd", "pass", "auth", "sig", "signature",
                       "credential", "session", "code", "jwt", "bearer")


def _query_name_is_secret(name: str) -> bool:
    words = re.split(r"[^a-z0-9]+|(?<=[a-z])(?=[A-Z])", name.lower())
    joined = name.lower().replace("-", "").replace("_", "")
    return any(w in _QUERY_SECRET_WORDS for w in words) or joined in ("apikey", "accesstoken", "xamzsignature",
                                                                       "xamzcredential", "xamzsecuritytoken", "sv")


def url_secrets(url: str) -> list[str]:
    """The parts of a URL that are credentials: user info (user and password) and the values of token-like query
    parameters. Output sinks scrub them wherever they appear; `masked_url` shows the URL without them."""
    found: list[str] = []
    match = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#@]*)@", url)
    if match:
        found += [part for part in re.split(r"[:]", match.group(1), maxsplit=1) if part]
        found.append(match.group(1))
    query = url.split("?", 1)[1].split("#", 1)[0] if "?" in url else ""
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if value and _query_name_is_secret(name):
            found.append(value)
    return [f for f in found if len(f) >= 1]


def masked_url(url: str) -> str:
    """The URL as it may be printed or written: user info and token-like query values replaced by the mask."""
    text = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@", lambda m: m.group(1) + MASK + "@", url)
    if "?" not in text:
        return text
    base, rest = text.split("?", 1)
    query, hash_mark, fragment = rest.partition("#")
    pairs = []
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        pairs.append(f"{name}={MASK}" if value and _query_name_is_secret(name) else pair)
    return base + "?" + "&".join(pairs) + hash_mark + fragment
