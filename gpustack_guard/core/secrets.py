"""Which values are secrets, masking them, and `${NAME}` references resolved from the environment (pure).

What counts as a secret, broadly (a value masked by mistake costs a look at the spec; one printed by mistake
costs a rotated credential):
- every env value read from the process environment (`${NAME}`), whatever its name;
- env values whose name has a secret-looking word (KEY, TOKEN, PASS, SECRET, CREDENTIAL, AUTH, PRIVATE, CERT,
  BEARER, HF_... but not huggingface_hub's folder and switch settings such as HF_HOME), or whose value looks
  like one (a URL with a password, a `Bearer ...` header, a known token prefix such as `hf_` or `sk-`);
- backend arguments named like one (`--hf-token`, `--api-key`, `--token`, `--password`);
- any env name or flag the spec lists in `guard.secrets`;
- in a URL: its user info, token-like query and fragment values, and path segments that are tokens (mask_url,
  the one function every message and reporter shows a URL through).

Masking in printed text (scrub) covers a secret in the shapes a server or proxy echoes it back: as written,
JSON-escaped, URL-encoded, HTML-escaped, base64 (the `user:password` of Basic auth) and cut short by an echo
that truncates (a prefix of PREFIX_CHARS or more characters is masked too).
"""

from __future__ import annotations

import binascii
import functools
import json
import re
from functools import lru_cache
from typing import AbstractSet, Iterable, Mapping

from gpustack_guard.core.pieced import PiecedText, map_pieces

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
# a URL scheme's length is bounded: unbounded, it is tried from every character of a long word (quadratic)
URL_SCHEME_MAX_CHARS = 32
URL_SCHEME = rf"[A-Za-z][A-Za-z0-9+.-]{{0,{URL_SCHEME_MAX_CHARS - 1}}}"
_URL_PASSWORD = re.compile(URL_SCHEME + r"://[^/\s:@]*:[^/\s@]+@")
_TOKEN_PATTERN = (r"^(Bearer\s+\S|hf_[A-Za-z0-9]{8}|sk-[A-Za-z0-9_-]{8}|gh[pousr]_[A-Za-z0-9]{8}|"
                  r"github_pat_|glpat-|xox[abposr]-|AKIA[0-9A-Z]{12}|"
                  # a GPUStack API key (security.get_key_pair: gpustack_<16 hex>_<32 hex>)
                  r"gpustack_[0-9A-Fa-f]{16}_[0-9A-Fa-f]{8})")
# What each alternative above starts with: a value that starts with none of them cannot match, and the pattern (~2.9 M
# instructions to compile) is compiled for the first value that does (docs/performance.md, twenty-first round).
_TOKEN_STARTS = ("Bearer", "hf_", "sk-", "gh", "github_pat_", "glpat-", "xox", "AKIA", "gpustack_")


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    return re.compile(_TOKEN_PATTERN)


def _token_shaped(value: str) -> bool:
    stripped = value.strip()
    return stripped.startswith(_TOKEN_STARTS) and _token_pattern().match(stripped) is not None


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


def _looks_like_token(value: str) -> bool:
    return bool(_URL_PASSWORD.search(value)) or _token_shaped(value)


def is_secret_value(value: str) -> bool:
    """Whether a value looks like a credential whatever its name: a URL with a password or a token in its query,
    a token."""
    if _looks_like_token(value):
        return True
    match = _URL.match(value.strip())
    return bool(match and match.group("lead") and _masked_rest(match.group("rest")) != match.group("rest"))


# ------------------------------------------------------------------------------------------------ URLs

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _percent_run() -> re.Pattern[str]:
    return re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def percent_encoded(value: str, safe: str = "") -> str:
    """Percent-encoding as URL encoders write it (UTF-8 bytes, upper-case hex), `safe` left as is (core reads
    no urllib: the architecture keeps I/O modules out)."""
    kept = _UNRESERVED | set(safe)
    return "".join(char if char in kept else "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
                   for char in value)


def percent_decoded(value: str) -> str:
    """A query value as a server reads it: '+' is a space, %XX runs are UTF-8 (invalid bytes replaced)."""
    return _percent_run().sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace"),
                        value.replace("+", " "))


# A query or fragment parameter is a secret when a part of its name (split at '_', '-', '.'; case ignored) ends in
# one of _PARAMETER_ENDS (accessToken, api_key, X-Amz-Security-Token; not max_tokens or keyboard), contains one of
# _PARAMETER_CONTAINS, or is one of _PARAMETER_WORDS (pre-signed URLs sign with `sig`/`Signature`, sessions and
# one-time codes open an account as well as a password does); and every cloud signing parameter (X-Amz-*,
# X-Goog-*: which of them are harmless changes over time).
_PARAMETER_ENDS = ("TOKEN", "KEY", "SECRET", "PASS", "PASSWORD", "PASSPHRASE")
_PARAMETER_CONTAINS = ("SECRET", "PASSW", "CREDENTIAL", "PRIVATE", "BEARER", "AUTH")
_PARAMETER_WORDS = {"SIG", "SIGNATURE", "PWD", "CODE", "JWT", "SESSION", "SESSIONID", "SID", "TICKET", "HMAC",
                    "SAS", "OTP"}
_PARAMETER_PREFIXES = ("X-AMZ-", "X-GOOG-", "X_AMZ_", "X_GOOG_")
# [scheme://]authority rest: the authority runs to the first '/', '?' or '#'; without '//' the text before the
# path is taken as an authority, so "admin:pw@host" loses its user info too.
_URL = re.compile(r"^(?P<lead>[^/?#]*//)?(?P<authority>[^/?#]*)(?P<rest>.*)$", re.S)


def is_secret_parameter(name: str) -> bool:
    """Whether a URL query or fragment parameter of this name carries a credential (case-insensitive)."""
    upper = name.strip().upper()
    if upper.startswith(_PARAMETER_PREFIXES):
        return True
    return any(part.endswith(_PARAMETER_ENDS) or part in _PARAMETER_WORDS or any(w in part for w in _PARAMETER_CONTAINS)
               for part in re.split(r"[_.\-]+", upper) if part)


def _hidden_value(piece: str) -> str | None:
    """What mask_url hides of one `name=value` (or bare) query or fragment piece: the value, or the whole bare
    piece shaped like a token; None when nothing."""
    name, equals, value = piece.partition("=")
    if not equals:
        return piece if piece and _looks_like_token(percent_decoded(piece)) else None
    if value and (is_secret_parameter(percent_decoded(name)) or _looks_like_token(percent_decoded(value))):
        return value
    return None


def _masked_parameters(text: str) -> str:
    pieces = re.split(r"([&;])", text)
    for index in range(0, len(pieces), 2):
        hidden = _hidden_value(pieces[index])
        if hidden is not None:
            pieces[index] = pieces[index][:len(pieces[index]) - len(hidden)] + MASK
    return "".join(pieces)


def _masked_rest(rest: str) -> str:
    """Path, query and fragment with token-like values masked."""
    before_fragment, hash_sign, fragment = rest.partition("#")
    path, question, query = before_fragment.partition("?")
    path = "/".join(MASK if segment and _looks_like_token(percent_decoded(segment)) else segment
                    for segment in path.split("/"))
    return path + question + _masked_parameters(query) + hash_sign + _masked_parameters(fragment)


def _url_parts(url: str) -> tuple[str, str, str]:
    """(scheme and '//', authority, the rest) of a URL. One that is malformed, with one slash after its scheme or
    three (`https:/u:pw@host`, `https:///u:pw@host`), has its user info after a '/': the authority is then the
    segment that holds the last '@' before any '?' or '#', so the password is masked however the URL was typed."""
    match = _URL.match(url)
    assert match is not None  # the pattern matches any text
    lead, authority, rest = match.group("lead") or "", match.group("authority"), match.group("rest")
    if "@" in authority or (lead and authority):
        return lead, authority, rest
    head = re.split(r"[?#]", rest, maxsplit=1)[0]
    at = head.rfind("@")
    if at < 0:
        return lead, authority, rest
    start = head.rfind("/", 0, at) + 1
    end = head.find("/", at)
    end = len(head) if end < 0 else end
    return lead + authority + rest[:start], rest[start:end], rest[end:]


def _not_a_host(authority: str) -> bool:
    """Whether an authority without user info cannot be `host[:port]`: empty, no host before its ':', or a port
    that is no number (`admin:p` of `https://admin:p#ss@h/`). A bracketed IPv6 host is left to the URL check."""
    if authority.startswith("["):
        return False
    host, colon, port = authority.rpartition(":")
    if not colon:
        return not authority
    return not host or bool(port) and not (port.isascii() and port.isdigit())


def _misplaced_at(authority: str, rest: str) -> int | None:
    """Where in `rest` user info ends that was typed with an unencoded '/', '?' or '#' in its password (or name),
    which then ends the authority early: `https://admin:p#ss@h/`, `https://admin:1234?5678@h/`, `https://#:pw@h/`.
    Such an '@' is the first one of `rest`, with no '=' before it (`?email=a@b` is a query value), and either a
    '?' or '#' before it or an authority that is no host[:port]; the user info then runs to the last '@' before
    the next '/', '?' or '#'. An '@' in the path of a well-formed authority (`http://h/models/x@v1`) is a path;
    so is `https://admin:1234/5678@h/`, which no reading can tell from one. None when there is no such '@'."""
    if "@" in authority:
        return None
    at = rest.find("@")
    if at < 0 or "=" in rest[:at]:
        return None
    if not (_not_a_host(authority) or "?" in rest[:at] or "#" in rest[:at]):
        return None
    end = min([k for k in (rest.find(c, at) for c in "/?#") if k >= 0] or [len(rest)])
    return rest.rfind("@", 0, end)


def _user_info_parts(url: str) -> tuple[str, str, str, str]:
    """(scheme and '//', user info, host[:port], the rest) of a URL, user info typed with an unencoded '/', '?'
    or '#' included (_misplaced_at)."""
    lead, authority, rest = _url_parts(url)
    at = _misplaced_at(authority, rest)
    if at is not None:
        user_info, tail = authority + rest[:at], rest[at + 1:]
        cut = re.search(r"[/?#]", tail)
        end = cut.start() if cut else len(tail)
        return lead, user_info, tail[:end], tail[end:]
    user_info, _, host = authority.rpartition("@")
    return lead, user_info, host, rest


def misplaced_user_info(url: str) -> bool:
    """Whether the URL holds user info after a '/', '?' or '#' it meant as a password's character (see
    _misplaced_at): a client reads another host (or none) from it, and its password as a port or a fragment."""
    lead, authority, rest = _url_parts(url)
    return _misplaced_at(authority, rest) is not None


def mask_url(url: str) -> str:
    """The URL as gsg shows it anywhere: without user info (a password, or a token used as a user name), with
    the values of token-like query and fragment parameters and token path segments as ********. Never raises:
    a malformed URL is masked by the same reading (the authority runs to the first '/', '?' or '#', or holds
    the '@' a malformed one has after a '/'; a password holding an unencoded '/', '?' or '#' is user info too)."""
    lead, _, host, rest = _user_info_parts(url)
    return lead + host + _masked_rest(rest)


def url_secrets(url: str | None) -> list[str]:
    """The values mask_url hides in a URL (its password, user name, token values), to scrub them from any text
    that echoes them outside the URL."""
    if not url:
        return []
    _, user_info, _, rest = _user_info_parts(url)
    found: list[str] = []
    if user_info:
        user, colon, password = user_info.partition(":")
        found += [percent_decoded(password), password]
        # a password with an unencoded '/', '?' or '#': a client that split the URL there echoes its pieces
        found += [piece for piece in re.split(r"[/?#]", password) if len(piece) >= 4 and piece != password]
        # a user name beside a password is a name ("admin" masked would hide that word everywhere); alone and
        # long or token-shaped it is the credential (https://ghp_...@github.com)
        if not colon and (len(user) >= 16 or _looks_like_token(percent_decoded(user))):
            found += [percent_decoded(user), user]
    before_fragment, _, fragment = rest.partition("#")
    path, _, query = before_fragment.partition("?")
    found += [segment for segment in path.split("/") if segment and _looks_like_token(percent_decoded(segment))]
    for piece in re.split(r"[&;]", query) + re.split(r"[&;]", fragment):
        hidden = _hidden_value(piece)
        if hidden is not None:
            found += [hidden, percent_decoded(hidden)]
    return [value for value in dict.fromkeys(found) if value]


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
    if not listed:  # nearly every spec (render asks once a spec): ~0.85 -> ~0.3 us
        return set(), set()
    return ({n for n in listed if not n.startswith("-")}, {n.lstrip("-") for n in listed if n.startswith("-")})


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str],
                extra: Iterable[str] = ()) -> tuple[dict[str, str], set[str], list[str]]:
    """(resolved env, keys holding secrets, names of unresolved references).

    A value written as `${NAME}` is read from the environment at render time and always counts as a secret.
    """
    if not env:  # most specs and templates set no env (render asks once a spec): ~0.75 -> ~0.2 us
        return {}, set(), []
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


def _may_be_secret_value(value: str) -> bool:
    """Cheap test before is_secret_value: only a URL ('//') or a token-shaped start can be one."""
    return "//" in value or _token_shaped(value)


def masked_value(value: str) -> str:
    """A plain flag's value as shown: a URL without its password and token values (the host and path stay, so
    the message still says where), a bare token as ********; anything else as it is."""
    if not _may_be_secret_value(value) or not is_secret_value(value):
        return value
    shown = mask_url(value)
    return MASK if shown == value else shown


def _hidden_in(value: str) -> list[str]:
    """The parts of a plain flag's value masked_value hides, for scrubbing them from other text."""
    if masked_value(value) == MASK:
        return [value]
    return url_secrets(value)


def mask_args(params: list[str] | None, extra: Iterable[str] = ()) -> list[str] | None:
    """backend_parameters with the values of secret flags masked, in both `--flag=value` and `--flag value`
    forms, and any other value that is a URL with a password or token, or a token (masked_value: a
    `--tokenizer=https://user:pw@host/...` pasted in a plain flag); everything else as it was."""
    if params is None:
        return None
    extra = list(extra)
    result, hide_next = [], False
    for item in params:
        text = str(item)
        if hide_next and not text.startswith("-"):  # every value up to the next flag: vLLM's --api-key takes several
            result.append(MASK)
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
        if not text.startswith("-"):
            result.append(masked_value(text))
        elif value is not None:
            result.append(f"{name}={masked_value(value)}")
        else:
            result.append(text)
    return result


def secret_arg_values(params: list[str] | None, extra: Iterable[str] = ()) -> list[str]:
    """The values mask_args hides, for scrubbing them from any text printed."""
    if not params:
        return []
    extra = tuple(extra)
    if not any(str(p).startswith("-") and is_secret_flag(_split_flag(str(p))[0], extra)
               or _may_be_secret_value(_split_flag(str(p))[1] or str(p)) for p in params):
        return []  # the common case: nothing to hide
    masked_params = mask_args(params, extra) or []
    found: list[str] = []
    for original, shown in zip(params, masked_params):
        text = str(original)
        if text == shown:
            continue
        name, value = _split_flag(text)
        if not text.startswith("-"):  # a bare value: a secret flag's (all of it) or a URL or token of its own
            found += [text] if shown == MASK else _hidden_in(text)
        elif is_secret_flag(name, extra):
            found.append(value or "")
        else:
            found += _hidden_in(value or "")
    return [v for v in dict.fromkeys(found) if v]


# ------------------------------------------------------------------------------------------------ scrubbing

SHORTEST_SECRET = 4  # shorter values are masked nowhere: "on", "1" and "true" would be masked everywhere
PREFIX_CHARS = 12  # an echo cut short after this many characters of a secret (or of one of its shapes) is masked
SHORTEST_BASE64 = 6  # base64 characters that a secret alone decides, fewest to look for (short ones are words)


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _base64_chars() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9+/_\-]")  # '=' only pads the end of a run


# safe characters of the encoders in use: Python's quote (default and none), JavaScript's encodeURIComponent and
# encodeURI, and the user-info set
_URL_SAFE_SETS = ("", "/", "/:@", "!'()*~", ";,/?:@&=+$!'()*#~")


# What html.escape writes for each character it escapes. Spelled out here: importing the html package loads
# html.entities, a 2,000-entry table, on every run that has a secret to scrub (~1 ms of start-up).
_HTML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_HTML_QUOTE_ESCAPES = (('"', "&quot;"), ("'", "&#x27;"))


def html_escaped(value: str, *, quote: bool = True) -> str:
    """html.escape(value, quote): `&`, `<`, `>` (first `&`), and with `quote` both quote characters."""
    for char, entity in _HTML_ESCAPES + (_HTML_QUOTE_ESCAPES if quote else ()):
        value = value.replace(char, entity)
    return value


def _escaped_shapes(value: str) -> set[str]:
    """The value as a server, a proxy or gsg's own reports may write it back: as is, JSON-escaped (once, and
    twice for JSON inside JSON; `/` as `\\/` too), URL-encoded (each way, either hex case), HTML-escaped."""
    shapes = {value, html_escaped(value), html_escaped(value, quote=False)}
    for ascii_only in (True, False):
        once = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
        shapes |= {once, once.replace("/", "\\/"), json.dumps(once, ensure_ascii=ascii_only)[1:-1]}
    plus_for_space = percent_encoded(value, " ").replace(" ", "+")
    for encoded in [percent_encoded(value, safe) for safe in _URL_SAFE_SETS] + [plus_for_space]:
        shapes |= {encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)}
    return {shape for shape in shapes if shape}


def _base64_cores(value: str) -> set[str]:
    """The base64 characters the value alone decides at each of the three alignments it can have inside a
    longer encoded text (`user:password` of Basic auth), in both alphabets."""
    raw = value.encode("utf-8")
    cores = set()
    for offset in range(3):
        # binascii (built in) is what base64.b64encode calls; the base64 module's import was ~27 M instructions,
        # ~1.6 % of a 1,000-spec validate run that has a secret to look for (docs/performance.md, twentieth round)
        encoded = binascii.b2a_base64(b"\0" * offset + raw, newline=False).decode("ascii")
        first, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6  # whole 6-bit groups of the value's bits
        core = encoded[first:end]
        if len(core) >= SHORTEST_BASE64:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


@lru_cache(maxsize=1024)  # the same few secrets are scrubbed from every line a command prints
def _shapes_of(value: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(_escaped_shapes(value)), tuple(_base64_cores(value))


def _widened_to_base64_run(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole encoded run around a match: the rest of it encodes what sits next to the secret (the user)."""
    while start > 0 and _base64_chars().match(text[start - 1]):
        start -= 1
    while end < len(text) and _base64_chars().match(text[end]):
        end += 1
    while end < len(text) and text[end] == "=":
        end += 1
    return start, end


# Every shape is looked for by its first PREFIX_CHARS characters (its key) in one pass over the text, however many
# secrets there are (a pass per shape cost secrets x output: ~30 s for 32 MiB and many keys). A key of
# LONG_KEY_CHARS or more holds a whole GRAM of the text's GRAM-aligned grid wherever it occurs, so the text is cut
# at that grid once and its grams met with the keys' in one set intersection; shorter keys (secrets under that
# length, each with a few shapes) are found by one compiled alternation.
GRAM = 6
LONG_KEY_CHARS = 2 * GRAM - 1
SCAN_WINDOW_CHARS = GRAM * (1 << 16)  # text cut into grams at once: the grams of 32 MiB never exist together
# Cutting the grid costs ~44 ns a character (4.4 s for the 100 MB of `validate -o json` at 10,000 specs), a
# str.find ~0.8 ns: up to this many distinct GRAM-character heads of long keys (a few secrets' shapes) are each
# found by str.find instead (issue 34); more (many secrets) go through the grid.
FIND_PROBES_MAX = 32


class _ShapeFinder:
    """The places where the shapes of a set of secrets start in a text, as scrub masks them."""

    def __init__(self, secrets: tuple[str, ...]):
        self.shapes: dict[str, list[tuple[str, bool]]] = {}  # key -> [(shape, whether it is a base64 core)]
        for value in secrets:
            shapes, cores = _shapes_of(value)
            for shape, is_core in [(shape, False) for shape in shapes] + [(core, True) for core in cores]:
                self.shapes.setdefault(shape[:PREFIX_CHARS], []).append((shape, is_core))
        self.grams: dict[str, list[tuple[str, int]]] = {}  # a gram of a long key -> [(key, where the gram is in it)]
        short = []
        for key in self.shapes:
            if len(key) < LONG_KEY_CHARS:
                short.append(key)
                continue
            for offset in range(GRAM):
                self.grams.setdefault(key[offset:offset + GRAM], []).append((key, offset))
        # the long keys by their first GRAM characters: each of those found by str.find, when there are few
        self.probes: dict[str, list[str]] = {}
        for key in self.shapes:
            if len(key) >= LONG_KEY_CHARS:
                self.probes.setdefault(key[:GRAM], []).append(key)
        self.short_lengths = sorted({len(key) for key in short})
        self.short = re.compile("|".join(map(re.escape, short))) if short else None
        # what core/pieced.py's piece-by-piece scrub must know (_piecewise_exact)
        self.every_shape = tuple({shape for found in self.shapes.values() for shape, _ in found})

    def starts(self, text: str) -> set[tuple[int, str]]:
        """(position, key) of every place a key starts in the text."""
        found: set[tuple[int, str]] = set()
        if len(self.probes) <= FIND_PROBES_MAX:  # the same places: every place each long key starts
            for probe, keys in self.probes.items():
                at = text.find(probe)
                while at != -1:
                    found.update((at, key) for key in keys if text.startswith(key, at))
                    at = text.find(probe, at + 1)
        for window in range(0, len(text), SCAN_WINDOW_CHARS) if len(self.probes) > FIND_PROBES_MAX else ():
            window_end = min(window + SCAN_WINDOW_CHARS, len(text))
            grid = {text[at:at + GRAM] for at in range(window, window_end, GRAM)}
            for gram in grid & self.grams.keys():
                at = text.find(gram, window, window_end + GRAM - 1)
                while at != -1:
                    found.update((at - offset, key) for key, offset in self.grams[gram]
                                 if at >= offset and text.startswith(key, at - offset))
                    at = text.find(gram, at + 1, window_end + GRAM - 1)
        short = self.short
        match = short.search(text) if short is not None else None
        while short is not None and match is not None:  # searched on from one character on: overlaps are found
            at = match.start()
            found.update((at, text[at:at + length]) for length in self.short_lengths
                         if text[at:at + length] in self.shapes)
            match = short.search(text, at + 1)
        return found

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each place the text holds a shape, or at least its key (its first PREFIX_CHARS
        characters); a base64 core's widened to its whole encoded run."""
        spans = []
        for start, key in self.starts(text):
            for shape, is_core in self.shapes[key]:
                end = start + len(key)
                while end - start < len(shape) and end < len(text) and text[end] == shape[end - start]:
                    end += 1
                spans.append(_widened_to_base64_run(text, start, end) if is_core else (start, end))
        return spans


# Tokens known by their shape alone (a token pasted where no name says "secret": a plain flag's value, an env var
# with an innocent name, a label, a model name, a log line, a server's error body). Each row: a prefix the issuer
# puts on every token it mints, so text without the prefix is never touched, and a body long enough that words
# and identifiers do not reach it. Every row starts at a word edge, no letter, digit or '_' before it ("xhf_..."
# and "my_ghp_..." are words); the rows whose body, or the cut head's, can hold '-' (sk-, xox, eyJ, bearer, cut)
# want no '-' before them either ("-sk-...", "task-..."), while hf_, gh*_, github_pat_ and AKIA/ASIA, whose bodies
# cannot, are tokens after one too: a name like "svc-hf_..." shows its token otherwise. Bodies are runs of one
# character class with no nested repeats, and a row's starts cannot fall inside another match of that row (no
# start follows a body character), so the search stays linear in the text. Why each shape:
# - hf_: Hugging Face user access tokens, `hf_` + a random run of letters (and digits), 34 in the tokens minted
#   today (huggingface.co/docs/hub/security-tokens); 30 or more leaves room for shorter ones.
# - sk-: OpenAI API keys (platform.openai.com/docs/api-reference/authentication): legacy `sk-` + 48 base62;
#   project, service-account and admin keys `sk-proj-`/`sk-svcacct-`/`sk-admin-` + long base64url runs. The
#   legacy body has no '-' or '_' so `someone/sk-Llama-3.1-8B-Instruct-GGUF` is a name, and both bodies must mix
#   upper case, lower case and digits (random keys do, names and hex digests do not).
# - ghp_/gho_/ghu_/ghs_/ghr_: GitHub personal, OAuth, user-to-server, server-to-server and refresh tokens, prefix
#   + 36 base62 (github.blog, "Behind GitHub's new authentication token formats", 2021); github_pat_:
#   fine-grained personal access tokens, `github_pat_` + 82 base62 and '_' (docs.github.com, "Managing your
#   personal access tokens").
# - xox[abposr]-: Slack bot, user, app, legacy and refresh tokens (api.slack.com/authentication/token-types):
#   numeric team and user ids and a random part joined by '-'; a digit must be in it, so "xoxb-token-here" is prose.
# - AKIA/ASIA: AWS access key ids, 20 upper-case letters and digits, AKIA long-term and ASIA temporary (STS)
#   (docs.aws.amazon.com IAM "Understanding unique ID prefixes").
# - eyJ...eyJ...: a JWT (RFC 7519) in JWS compact form (RFC 7515 section 7.1): base64url header '.' payload '.'
#   signature, header and payload JSON objects, so both start with the encoding of '{"', "eyJ"; two such parts
#   are enough (an echo may cut the rest).
# - any of these prefixes and 9 or more body characters cut by "…" or "..." (JSON writes "…" as \u2026): gsg's
#   own messages cut a long value at 40 characters (core/echo) and servers cut echoes, so a token's head is masked
#   too (as scrub masks a known secret's first PREFIX_CHARS); a digit or capital must be in it
#   ("sk-learning-rate..." is a word).
_EDGE = r"(?<![A-Za-z0-9_])"
_EDGE_NO_HYPHEN = r"(?<![A-Za-z0-9_-])"
TOKEN_SHAPES = (
    _EDGE + r"(?:hf_[A-Za-z0-9]{30,}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{50,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9]))"
    r"|" + _EDGE_NO_HYPHEN +
    r"(?:(?P<openai>sk-(?:[A-Za-z0-9]{32,}(?![A-Za-z0-9_-])|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}))"
    r"|(?P<slack>xox[abposr]-[A-Za-z0-9-]{10,})"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]+)?"
    r"|(?i:bearer)[ \t]+(?P<bearer>[A-Za-z0-9._~+/-]{15,}[A-Za-z0-9_~+/-]=*)"
    r"|(?P<cut>(?:hf_|sk-|gh[pousr]_|github_pat_|xox[abposr]-|AKIA|ASIA|eyJ)[A-Za-z0-9_-]{9,})(?=\u2026|\\u2026|\.\.\.))")


@lru_cache(maxsize=1)  # compiled on the first scrub, not at import (~1 ms; the import budget's "no import-time work")
def _token_shapes() -> re.Pattern[str]:
    return re.compile(TOKEN_SHAPES)


def _mixed(body: str) -> bool:
    return any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body)


def _token_span(match: re.Match[str]) -> tuple[int, int] | None:
    """The part of a shape's match to mask, or None for a match the shape's own check turns down."""
    openai, slack, bearer = match.group("openai"), match.group("slack"), match.group("bearer")
    if openai is not None and not _mixed(openai.split("-", 2)[-1] if openai.count("-") > 1 else openai[3:]):
        return None
    if slack is not None and not any(c.isdigit() for c in slack[5:]):
        return None
    cut = match.group("cut")
    if cut is not None and not any(c.isdigit() or c.isupper() for c in cut[3:]):
        return None  # "sk-learning-rate...": a word cut short, not a random token's head
    if bearer is not None:
        has_digit = any(c.isdigit() for c in bearer)
        random_letters = "-" not in bearer and any(c.isupper() for c in bearer) and any(c.islower() for c in bearer)
        return match.span("bearer") if has_digit or random_letters else None
    return match.span()


# Every TOKEN_SHAPES match holds one of these (or "bearer" in any case): a text with none has no match, and
# str.find rules that out at ~0.8 ns a character, where the pattern's own search takes ~45 (4.8 s for the 100 MB
# of `validate -o json` at 10,000 specs; issue 34). A text that holds one is searched as before.
_TOKEN_LITERALS = ("hf_", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "ASIA", "eyJ")
# The same literals as seven scans, not twelve: a class after a literal head is one pass of re's prefix search,
# as fast as one `in` (~0.08 s a scan of the 100 MB of `validate -o json` at 10,000 specs; report_formats.py).
_LITERAL_SCANS = ("hf_", "sk-", "github_pat_", "xox", "eyJ")
_CLASS_SCANS = ("gh[pousr]_", "A[KS]IA")


@lru_cache(maxsize=1)
def _class_scans() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in _CLASS_SCANS)


def _may_hold_token(text: str) -> bool:
    if any(literal in text for literal in _LITERAL_SCANS) or any(p.search(text) for p in _class_scans()):
        return True
    if text.isascii():  # lower() keeps an ASCII text's length, and no other character folds to b, e, a or r
        return "bearer" in text.lower()
    return re.search("(?i)bearer", text) is not None


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every well-known token shape in the text (TOKEN_SHAPES), one left-to-right search."""
    if not _may_hold_token(text):
        return []
    return [span for span in map(_token_span, _token_shapes().finditer(text)) if span is not None]


@lru_cache(maxsize=16)  # the same secrets are scrubbed from every line a command prints
def _finder(secrets: frozenset[str]) -> _ShapeFinder:
    return _ShapeFinder(tuple(sorted(secrets)))


def scrub(text: str, secrets: list[str], *, shapes: bool = True) -> str:
    """Mask known secret values in any text before it is printed or written (defence in depth): each value in
    every shape an echo may give it (see _escaped_shapes and _base64_cores), whole or cut short; and, unless
    `shapes` is off (--show-secrets), every token of a well-known shape (TOKEN_SHAPES) wherever it was pasted.
    A PiecedText is scrubbed one distinct piece at a time where that masks exactly what the joined text would
    (_piecewise_exact): `validate -o json`'s shared estimates once, not once per spec (issue 34)."""
    wanted = frozenset(v for v in secrets if v and len(v) >= SHORTEST_SECRET)
    if type(text) is PiecedText and _piecewise_exact(text.boundaries(), _finder(wanted) if wanted else None):
        return _scrubbed_pieces(text, wanted, shapes)
    return _scrubbed(text, wanted, shapes)


# Where two pieces meet, scrubbing them apart masks what scrubbing them joined masks unless something reaches
# across: a token match (TOKEN_SHAPES) holds only _IN_TOKEN characters (letters, digits, its punctuation and
# bearer's gap), so it can span the meeting point only if both sides are such; its look-behind tests the left
# character and its look-aheads the right one; a base64 core's mask widens over base64 characters (and '=' pads on
# the right); a secret's shape crosses only where it holds the two meeting characters. Two masks that touch there
# (one mask in the joined text, two apart) are joined into one by _scrubbed_pieces, from where each piece's own
# masks start and end: a secret holding a space beside one starting with '{' (a JSON credential in the process
# environment) no longer sends the whole report through the joined scrub.
_LETTERS_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_REACH_LEFT = frozenset(_LETTERS_DIGITS + "_-+/~=")
_REACH_RIGHT = frozenset(_LETTERS_DIGITS + "_-+/~=.\\\u2026")
_IN_TOKEN = frozenset(_LETTERS_DIGITS + "_-.~+/= \t")


def _piecewise_exact(boundaries: set[tuple[str, str]], finder: _ShapeFinder | None) -> bool:
    """Whether scrubbing each piece alone gives the joined text's scrub (masks touching where two pieces meet
    joined as _scrubbed_pieces does), given the (left, right) characters at every place two pieces meet and
    the known secrets' shapes."""
    for left, right in boundaries:
        if left in _REACH_LEFT or right in _REACH_RIGHT or (left in _IN_TOKEN and right in _IN_TOKEN):
            return False
        if finder is not None and any(left + right in shape for shape in finder.every_shape):
            return False
    return True


def _scrubbed_pieces(text: PiecedText, wanted: frozenset[str], shapes: bool) -> str:
    """Each distinct piece scrubbed once (map_pieces); where one piece's last mask ends at its end and the next
    piece's first starts at its start, the joined text has one mask there, so the second goes."""
    edges: dict[int, tuple[bool, bool]] = {}  # a scrubbed piece -> (masked from its start, masked to its end)

    def scrubbed(piece: str) -> str:
        spans = _merged_spans(piece, wanted, shapes)
        shown = _masked(piece, spans)
        edges[id(shown)] = (bool(spans) and spans[0][0] == 0, bool(spans) and spans[-1][1] == len(piece))
        return shown
    shown = map_pieces(text, scrubbed)
    if shown is text:
        return text
    results, masked_to_end = [], False
    for piece in shown.pieces:
        from_start, to_end = edges.get(id(piece), (False, False))
        results.append(piece[len(MASK):] if from_start and masked_to_end else piece)
        masked_to_end = to_end
    return PiecedText.join(results)


def _scrubbed(text: str, wanted: frozenset[str], shapes: bool) -> str:
    return _masked(text, _merged_spans(text, wanted, shapes))


def _merged_spans(text: str, wanted: frozenset[str], shapes: bool) -> list[list[int]]:
    """[start, end] of each mask the text gets: its secrets' and tokens' spans, those overlapping or touching
    merged into one."""
    spans = _finder(wanted).spans(text) if wanted and text else []
    if shapes and text:
        spans += token_spans(text)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:  # overlapping or touching: one mask
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _masked(text: str, merged: list[list[int]]) -> str:
    if not merged:
        return text
    pieces, shown_from = [], 0
    for start, end in merged:
        pieces += [text[shown_from:start], MASK]
        shown_from = end
    pieces.append(text[shown_from:])
    return "".join(pieces)
