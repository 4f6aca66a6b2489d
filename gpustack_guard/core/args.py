"""Backend arguments: parse `backend_parameters` into canonical flags, compare and merge them.

`--k=v` and `--k v` (one item or two), `_` and `-` in names, short aliases (`-tp`, `-c`, `-ngl`) and boolean
flags all normalise to one form, so a template's pinned flag and a spec's flag compare by meaning.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.secrets import is_secret_flag
from gpustack_guard.core.values import frozen_value

FORBIDDEN = {
    "port": "GPUStack assigns the port itself",
    "api-key": "GPUStack's proxy handles authentication",
    "served-model-name": "GPUStack serves the model under its deployment name",
}

# GPUStack's admission check (routes/models.py validate_model_in) looks for these names whatever the backend:
# the value must be all digits in 0..999, and 0 with manually selected GPUs is refused (0 layers = CPU only).
GPU_LAYERS_NAMES = ("gpu-layers", "ngl", "n-gpu-layers")
MAX_GPU_LAYERS = 999

_ALIASES = {
    "vllm": {"tp": "tensor-parallel-size", "pp": "pipeline-parallel-size", "dp": "data-parallel-size",
             "q": "quantization"},
    "sglang": {"tp": "tp-size", "tensor-parallel-size": "tp-size", "pp": "pp-size",
               "pipeline-parallel-size": "pp-size", "dp": "dp-size", "data-parallel-size": "dp-size"},
    "llamacpp": {"c": "ctx-size", "ngl": "gpu-layers", "n-gpu-layers": "gpu-layers", "np": "parallel",
                 "b": "batch-size", "ub": "ubatch-size", "ctk": "cache-type-k", "ctv": "cache-type-v",
                 "fa": "flash-attn", "ts": "tensor-split", "nkvo": "no-kv-offload", "sm": "split-mode",
                 "mg": "main-gpu", "t": "threads", "parallel-size": "parallel", "kvu": "kv-unified",
                 "no-kvu": "no-kv-unified", "fitt": "fit-target", "fitc": "fit-ctx", "ot": "override-tensor",
                 "cmoe": "cpu-moe", "ncmoe": "n-cpu-moe"},
}
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE]-?\d+)?$")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def backend_family(backend: str | None, is_gguf: bool = False) -> str:
    """vllm | sglang | llamacpp | other: which engine's flag vocabulary applies."""
    name = (backend or "").lower()
    if name == "vllm" or (not name and not is_gguf):
        return "vllm"
    if name == "sglang":
        return "sglang"
    if name in ("llama.cpp", "llama-box", "llamacpp", "ollama") or is_gguf:
        return "llamacpp"
    return "other"


@frozen_value(eq=True)
class Arg:
    """One backend argument, its name canonical, with its position in the list it came from."""

    __repr__ = fields_repr

    key: str  # canonical name: no leading dashes, '-' separators, aliases resolved
    value: str | None  # None for a boolean flag
    index: int  # position in the source list, to point findings at the right line
    # the values of a flag given several (engine_flags.MULTI_VALUE_FLAGS), each passed on as an item of its own
    # (`--k=a b` would reach the engine as the one value 'a b'); value is them joined by a space
    values: tuple[str, ...] = ()

    def render(self) -> str:
        if self.values:
            return " ".join((f"--{self.key}", *self.values))
        return f"--{self.key}" if self.value is None else f"--{self.key}={self.value}"

    def items(self) -> list[str]:
        """The argument as backend_parameters items, each one GPUStack's worker reads back as this argument."""
        if self.values:
            return [f"--{self.key}", *self.values]
        item = self.render()
        if self.value is None or _one_token(item):
            return [item]
        # the worker splits `--k=a b` at the blank (worker_tokens). Spelled so GPUStack 2.1 (an item with '=' kept
        # whole, any other shlex-split) reads the same: `--k 'a b'`; else (a value holding '=', or a backslash
        # before a line break, which the worker joins even inside quotes) the value as an item of its own, which
        # 2.2 and later pass on as it is
        import shlex  # here: only a value with blanks or quotes needs it (import budget)

        quoted = f"--{self.key} {shlex.quote(self.value)}"
        if "=" not in self.value and worker_tokens(quoted) == [f"--{self.key}", self.value]:
            return [quoted]
        return [f"--{self.key}", self.value]


class ArgError(ValueError):
    def __init__(self, message: str, index: int):
        self.index = index
        super().__init__(message)


def canonical_key(raw: str, family: str) -> str:
    key = raw.lstrip("-").replace("_", "-")
    return _ALIASES.get(family, {}).get(key, key)


def is_flag(token: str) -> bool:
    """Whether argparse reads the token as a flag (a negative number is a value)."""
    return token.startswith("-") and not _NUMBER.match(token)


# Characters that look like a dash but are not one (an engine sees no flag), and the invisible or non-ASCII
# spaces that look like a separator but are not one (an engine sees one unknown flag `--max-model-len 4096`).
_DASH_LOOKALIKES = set("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d")


def _lookalike(char: str) -> bool:
    if char in _DASH_LOOKALIKES:
        return True
    return not char.isascii() and (char.isspace() or unicodedata.category(char) in ("Zs", "Zl", "Zp", "Cf"))


def flag_name_part(item: str) -> str:
    """The part of an item an engine reads as the flag's name: up to `=` or an ASCII space."""
    return re.split(r"[= \t]", item, maxsplit=1)[0]


def lookalike_problem(item: str) -> str | None:
    """Why an item's flag is not the flag it looks like: a dash look-alike, a non-ASCII space or any other
    non-ASCII character (a look-alike letter) in its name."""
    if not item or not (item[0] == "-" or item[0] in _DASH_LOOKALIKES):
        return None
    for position, char in enumerate(flag_name_part(item), start=1):
        if _lookalike(char):
            name = unicodedata.name(char, "an unnamed character")
            role = "a dash" if char in _DASH_LOOKALIKES else "a space"
            shown = EF.shown(item).encode("ascii", "backslashreplace").decode()
            return (f"U+{ord(char):04X} {name} at character {position} of {shown} looks like {role} but is not "
                    f"one: the engine reads no such flag; type an ASCII {'-' if role == 'a dash' else 'space'}"
                    + ("" if role == "a dash" else " or '='"))
        if not char.isascii():  # every engine's flags are ASCII: `--max-num-sеqs` (a Cyrillic е), `--x＝1`
            name = unicodedata.name(char, "an unnamed character")
            shown = EF.shown(item).encode("ascii", "backslashreplace").decode()
            return (f"U+{ord(char):04X} {name} at character {position} of {shown} is not ASCII, as every engine "
                    "flag is: the engine reads no such flag and refuses to start; type the flag in ASCII")
    return None


def parse(params: list[str] | None, family: str, version: str | None = None) -> list[Arg]:
    """Parse argv-style strings, for the engine release when known (which flags take several values). Raises
    ArgError for a value that follows no flag or a flag that takes one value."""
    return list(_parse(tuple(params or ()), family, EF.multi_value_flags(family, version)))


# The dashes each engine reads a flag after. gsg reads a flag whatever its dashes (`-max-model-len`, `---ctx-size`),
# so it refuses the spellings the engine refuses, or the estimate would size a value the engine never starts with.
# vLLM and SGLang parse with argparse: a long name only after two dashes (`-max-model-len` is an unrecognized
# argument: vLLM's FlexibleArgumentParser, vllm/utils/__init__.py v0.11.0, rewrites only `--` names and `-O`);
# their short flags (-tp, -pp, -dp, -dcp, -q, -O in vllm/engine/arg_utils.py v0.11.0) are not hyphenated, so only a
# hyphenated or known long name after one dash is refused. llama.cpp (common/arg.cpp, vendored by
# llama-cpp-python 0.3.36) looks up the whole word: `-c` and `--ctx-size`, never `--c` or `-ctx-size`.
LLAMACPP_SHORT_ONLY = frozenset({"c", "ngl", "np", "b", "ub", "ctk", "ctv", "fa", "ts", "nkvo", "sm", "mg", "t",
                                 "kvu", "no-kvu", "fitt", "fitc", "ot", "cmoe", "ncmoe"})
LLAMACPP_LONG_ONLY = frozenset({"ctx-size", "gpu-layers", "n-gpu-layers", "parallel", "batch-size", "ubatch-size",
                                "cache-type-k", "cache-type-v", "flash-attn", "tensor-split", "no-kv-offload",
                                "split-mode", "main-gpu", "threads", "kv-unified", "no-kv-unified", "fit-target",
                                "fit-ctx", "override-tensor", "cpu-moe", "n-cpu-moe", "kv-unified-per-slot"})


def dash_problem(name: str, family: str) -> str | None:
    """Why the engine of `family` reads no flag spelled `name` (an item's part before '=' or a blank), or None."""
    bare = name.lstrip("-")
    dashes = len(name) - len(bare)
    engine = EF.ENGINE_NAMES.get(family)
    if engine is None or not bare:
        return None
    shown = EF.shown(name)
    if dashes > 2:
        return (f"{shown} has {dashes} dashes: {engine} reads no such flag and refuses to start (unrecognized "
                f"argument); write --{bare}")
    if family == "llamacpp":
        if dashes == 1 and bare in LLAMACPP_LONG_ONLY:
            return (f"{shown} has one dash: llama.cpp reads a flag only as spelled, --{bare}, and refuses {shown} "
                    "(invalid argument)")
        if dashes == 2 and bare.replace("_", "-") in LLAMACPP_SHORT_ONLY:
            return (f"{shown} has two dashes: llama.cpp reads a flag only as spelled, -{bare}, and refuses {shown} "
                    "(invalid argument)")
        return None
    if dashes != 1 or (family == "vllm" and bare.startswith("O")):  # -O3, -O.level=3: vLLM's own short form
        return None
    aliases = _ALIASES.get(family, {})
    if bare in aliases:
        return None
    long_names = set(aliases.values()) | set(EF.numeric_flags(family, None))
    if "-" in bare or "_" in bare or bare in long_names:
        return (f"{shown} has one dash: {engine} (argparse) reads a long flag only after two, --{bare}, and "
                f"refuses {shown} (unrecognized arguments)")
    return None


# How GPUStack's worker turns one backend_parameters item into argv tokens, read in the released gpustack 2.3.0
# wheel and at the v2.2.0 and v2.2.3 tags (gpustack/utils/command.py flatten_to_argv, called by
# worker/backends/base.py _flatten_backend_param; v2.1 kept an item holding '=' whole and shlex-split others): an
# item whose first word is a flag is split as a shell splits a line (shlex: quotes group, backslashes escape; a
# JSON object or list right after '=' stays whole; a backslash before a line break joins the lines; one stray
# backslash at the end is dropped), so `--enforce-eager --max-model-len 4096` is two flags; any other item (a
# value) is one token as written. An empty item is dropped by the worker; gsg refuses it (below).
_LINE_CONTINUATION = re.compile(r"\\\r?\n")
_JSON_AFTER_EQUALS = re.compile(r"=(?=[{\[])")
_SHLEX_SPECIAL = re.compile(r"[ \t\r\n'\"\\]")  # shlex.split's whitespace, quotes and escape (no comments)


def _is_worker_flag(word: str) -> bool:
    """A word GPUStack's worker takes for a flag: a dash and more, not '--', not a number (float() reads it)."""
    if len(word) < 2 or not word.startswith("-") or word == "--":
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def _json_end(text: str, start: int) -> int:
    """Where the JSON value opening at text[start] ends: after its matching bracket (brackets inside strings do
    not count), or at the end of the text when it never closes."""
    depth = 0
    in_string = escaped = False
    for position in range(start, len(text)):
        char = text[position]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif not in_string and char in "{[":
            depth += 1
        elif not in_string and char in "}]":
            depth -= 1
            if depth == 0:
                return position + 1
    return len(text)


# shlex.split's words (POSIX mode, whitespace split, no comments), read a run at a time: shlex reads one character
# per Python call, ~13 us each, so a 65,536-character quoted item (MAX_SCALAR_CHARS) took ~1 s and a 16 MiB spec of
# them minutes; these patterns are linear and take milliseconds (tests/core/test_shell_words.py holds both equal)
_SHELL_PIECE = re.compile(r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[ \t\r\n]+""", re.DOTALL)
_DOUBLE_QUOTED_BODY = re.compile(r"""(?:[^"\\]|\\.)*""", re.DOTALL)
_ESCAPE_IN_DOUBLE_QUOTES = re.compile(r"\\(.)", re.DOTALL)


def _double_quoted(body: str) -> str:
    # inside double quotes a backslash escapes only '"' and itself; before anything else it stays
    return _ESCAPE_IN_DOUBLE_QUOTES.sub(lambda m: m.group(1) if m.group(1) in '"\\' else m.group(), body)


def shell_words(text: str) -> list[str]:
    """shlex.split(text), with its ValueError words ("No closing quotation", "No escaped character")."""
    words: list[str] = []
    word: list[str] = []
    quoted = False  # '' or "" make a word of their own, even when empty
    position = 0
    while position < len(text):
        piece = _SHELL_PIECE.match(text, position)
        if piece is None:  # a quote that never closes, or a backslash that ends the text
            if text[position] == '"' and \
                    _DOUBLE_QUOTED_BODY.match(text, position + 1).end() < len(text):  # type: ignore[union-attr]
                raise ValueError("No escaped character")  # the body stops at a final backslash
            raise ValueError("No escaped character" if text[position] == "\\" else "No closing quotation")
        found = piece.group()
        if found[0] in " \t\r\n":
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        elif found[0] == "'":
            word.append(found[1:-1])
            quoted = True
        elif found[0] == '"':
            word.append(_double_quoted(found[1:-1]))
            quoted = True
        elif found[0] == "\\":
            word.append(found[1])
        else:
            word.append(found)
        position = piece.end()
    if word or quoted:
        words.append("".join(word))
    return words


def worker_tokens(item: str) -> list[str]:
    """The argv tokens GPUStack's worker passes the engine for one backend_parameters item (see above). Raises
    ValueError (shlex's words) for an item it cannot split: a quote that never closes."""
    text = item.strip()
    if not text or not _is_worker_flag(text.split(None, 1)[0]):
        return [text] if text else []
    if not _SHLEX_SPECIAL.search(text):  # nothing shlex splits at or unquotes: the item is one word
        return [text]
    # JSON after '=' stands aside as a placeholder shlex keeps whole (its blanks and quotes are its own)
    marker = "\ue000"  # a private-use character: taken as part of a word by shlex
    while marker in text:
        marker += "\ue000"
    pieces: list[str] = []
    kept: list[str] = []
    position = 0
    for opening in _JSON_AFTER_EQUALS.finditer(text):  # a run at a time: a character a call was ~0.2 s a MiB
        if opening.start() < position:  # inside a JSON value already kept
            continue
        end = _json_end(text, opening.start() + 1)
        pieces.append(text[position:opening.start()])
        kept.append(text[opening.start() + 1:end])
        pieces.append(f"={marker}{len(kept) - 1}{marker}")
        position = end
    pieces.append(text[position:])
    masked = _LINE_CONTINUATION.sub(" ", "".join(pieces))
    trimmed = masked.rstrip()
    if (len(trimmed) - len(trimmed.rstrip("\\"))) % 2 == 1:
        masked = trimmed[:-1]
    tokens = shell_words(masked)
    if not kept:
        return tokens
    # every placeholder back in one pass a token (one replace per JSON value per token was quadratic: 4,000
    # `x={}` words in one item took 8 s)
    placeholder = re.compile(f"{marker}([0-9]+){marker}")
    return [placeholder.sub(lambda m: kept[int(m.group(1))], token) for token in tokens]


def _one_token(item: str) -> bool:
    """Whether the worker passes the item on as it is, one argument."""
    try:
        return worker_tokens(item) == [item]
    except ValueError:  # a quote the worker cannot close
        return False


def _worker_argv(params: tuple[str, ...]) -> tuple[list[str], list[int]]:
    """Every item's worker tokens in order, with the index of the item each came from."""
    tokens: list[str] = []
    origins: list[int] = []
    for index, raw in enumerate(params):
        if not raw.strip():
            # the worker drops it, but it is a mistake in the list (a stray comma, a value lost)
            raise ArgError("an empty argument: GPUStack's worker drops it; remove it, or give the value it lost", index)
        try:
            split = worker_tokens(raw)
        except ValueError as exc:
            raise ArgError(f"GPUStack's worker cannot split {EF.shown(raw.strip())} into arguments ({exc}: "
                           "close the quote, or give each argument an item of its own)", index) from None
        tokens.extend(split)
        origins.extend([index] * len(split))
    return tokens, origins


@lru_cache(maxsize=4096)  # specs repeat the same argument lists; Args are immutable
def _parse(params: tuple[str, ...], family: str, multi: frozenset[str]) -> tuple[Arg, ...]:
    for index, raw in enumerate(params or ()):  # before pairing: a look-alike flag must not pass as a value
        problem = lookalike_problem(raw.strip())
        if problem:
            raise ArgError(problem, index)
    tokens, origins = _worker_argv(tuple(params or ()))
    result: list[Arg] = []
    i = 0
    while i < len(tokens):
        item, index = tokens[i].strip(), origins[i]
        if not item:
            raise ArgError("an empty argument: the engine reads it as a positional value and refuses to start", index)
        if item in ("-", "--"):
            raise ArgError(f"'{item}' alone is not a flag ('--' ends the options: what follows would reach the "
                           "engine as positional values)", index)
        if not is_flag(item):
            if result and result[-1].value is not None and not result[-1].values:
                # argparse gives a one-value flag one value and refuses the next word (unrecognized arguments)
                which = ("whose '=' gives it exactly one value" if result[-1].key in multi
                         else "which takes one value")
                if is_secret_flag(result[-1].key):  # neither value is shown
                    raise ArgError(f"a second value follows --{result[-1].key}, {which}: the engine refuses it "
                                   "(unrecognized arguments)", index)
                raise ArgError(f"'{item}' follows --{result[-1].key} {EF.shown(result[-1].value)}, {which}: the "
                               "engine refuses the second (unrecognized arguments)", index)
            raise ArgError(f"'{item}' is a value that follows no flag", index)
        spelled = dash_problem(flag_name_part(item), family)
        if spelled is not None:
            raise ArgError(spelled, index)
        # the flag's name ends at its first '=' or blank, whichever comes first: `--lora-paths a=x b=y` is the
        # flag --lora-paths with the value `a=x b=y`, not a flag named `--lora-paths a`
        split = re.search(r"[=\s]", item)
        if split is not None and split.group() == "=":
            name, value = item.split("=", 1)
        elif split is not None:
            name, value = item.split(None, 1)
            if canonical_key(name, family) in multi:  # several values in one token: each its own
                i = _multi_value(result, canonical_key(name, family), value.split(), tokens, i, origins)
                continue
        elif canonical_key(item, family) in multi:
            i = _multi_value(result, canonical_key(item, family), [], tokens, i, origins)
            continue
        elif i + 1 < len(tokens) and tokens[i + 1].strip() and not is_flag(tokens[i + 1].strip()):
            name, value = item, tokens[i + 1].strip()
            result.append(Arg(canonical_key(name, family), value, index))
            i += 2
            continue
        else:
            name, value = item, None
        result.append(Arg(canonical_key(name, family), value.strip() if value is not None else None, index))
        i += 1
    return tuple(result)


def _multi_value(result: list[Arg], key: str, values: list[str], items: list[str], index: int,
                 origins: list[int]) -> int:
    """Append a several-value flag at items[index] with its values: the words given in its own item, then every
    following item up to the next flag (argparse nargs='+'/'*'). Returns the index of the item after them."""
    end = index + 1
    while end < len(items) and items[end].strip() and not is_flag(items[end].strip()):
        values.append(items[end].strip())
        end += 1
    # one value renders as `--k=v` as before; several stay separate items (`--k=a b` is the one value 'a b')
    result.append(Arg(key, " ".join(values) if values else None, origins[index],
                      tuple(values) if len(values) > 1 else ()))
    return end


def normal_value(value: str | None) -> str:
    """A value's meaning: flags equal 'true', numbers compare numerically, booleans by word."""
    if value is None:
        return "true"
    text = value.strip().strip("'\"")
    low = text.lower()
    if low in _TRUE:
        return "true"
    if low in _FALSE:
        return "false"
    if _NUMBER.match(text):
        number = float(text)
        return str(int(number)) if number.is_integer() else repr(number)
    return text


def same_value(a: str | None, b: str | None, key: str | None = None, family: str | None = None) -> bool:
    """Equal in meaning; with the flag and engine known, numbers compare as the engine reads them (16K = 16384)."""
    if normal_value(a) == normal_value(b):
        return True
    if not key or not family:
        return False
    flag = EF.numeric_flags(family, None).get(key)
    if flag is None:
        return False
    try:
        return EF.read_value(flag, a, family) == EF.read_value(flag, b, family)
    except EF.FlagValueError:
        return False


def as_dict(args: Iterable[Arg], family: str | None = None) -> dict[str, str | None]:
    """Last occurrence wins, as in argparse; a flag the engine appends to (engine_flags.REPEATABLE) keeps every
    value, in order, joined by the engine's separator, at the place of its first occurrence."""
    joins = EF.repeatable(family)
    out: dict[str, str | None] = {}
    for arg in args:
        sep = joins.get(arg.key)
        if sep is not None and out.get(arg.key) and arg.value:
            out[arg.key] = f"{out[arg.key]}{sep}{arg.value}"
        else:
            out[arg.key] = arg.value
    return out


def duplicates(args: Iterable[Arg], family: str | None = None) -> list[tuple[Arg, Arg]]:
    """Pairs (first, later) of the same flag given twice with different meanings (a flag the engine appends to
    when repeated is not one: both values count)."""
    seen: dict[str, Arg] = {}
    pairs = []
    repeatable = EF.repeatable(family).keys() | EF.kept_each(family)
    for arg in args:
        if arg.key in repeatable:
            continue
        if arg.key in seen and not same_value(seen[arg.key].value, arg.value, arg.key, family):
            pairs.append((seen[arg.key], arg))
        seen[arg.key] = arg
    return pairs


def merge(pinned: list[Arg], defaults: list[Arg], spec: list[Arg],
          family: str | None = None) -> tuple[list[Arg], list[tuple[Arg, Arg]]]:
    """Final arguments: pinned (spec may not contradict), defaults (spec may override), then the spec's own.

    Returns (final, conflicts) where a conflict is (spec arg, pinned arg).
    """
    pinned_map = {arg.key: arg for arg in pinned}
    spec_map = as_dict(spec, family)
    spec_last = {arg.key: arg for arg in spec}  # argparse keeps the last; its separate values stay separate
    conflicts = [(arg, pinned_map[arg.key]) for arg in spec
                 if arg.key in pinned_map and not same_value(arg.value, pinned_map[arg.key].value, arg.key, family)]
    final: list[Arg] = list(pinned_map.values())
    placed = set(pinned_map)
    each = EF.kept_each(family)
    for arg in defaults:
        if arg.key in placed or arg.key in each and arg.key in spec_map:  # the spec's own occurrences replace it
            continue
        final.append(_placed(spec_last.get(arg.key), spec_map.get(arg.key, arg.value), arg))
        placed.add(arg.key)
    for arg in spec:
        if arg.key in each and arg.key not in pinned_map:  # every occurrence counts to the engine: kept, in order
            final.append(arg)
        elif arg.key not in placed:
            final.append(_placed(spec_last[arg.key], spec_map[arg.key], arg))
            placed.add(arg.key)
    return final, conflicts


def _placed(last: Arg | None, value: str | None, at: Arg) -> Arg:
    """The argument with its final value at the place of `at`; a several-value flag's values stay separate."""
    values = last.values if last is not None and last.value == value else ()
    return Arg(at.key, value, at.index, values)


def render(args: Iterable[Arg]) -> list[str]:
    return [item for arg in args for item in arg.items()]


# Which flags set tensor and pipeline parallelism, per engine (after alias resolution).
PARALLEL_FLAGS = {"vllm": ("tensor-parallel-size", "pipeline-parallel-size"), "sglang": ("tp-size", "pp-size")}


def parallel_size(flags: dict[str, str | None], family: str) -> tuple[int, int]:
    """(tp, pp) the arguments ask for; (1, 1) when unset or for engines without tensor parallelism here.

    Rendering has refused values the engine refuses (GSG016); a caller on unchecked arguments gets 1 for them
    and the validation that follows reports them."""
    keys = PARALLEL_FLAGS.get(family)
    if not keys:
        return 1, 1
    return _size(flags, keys[0], family), _size(flags, keys[1], family)


def _size(flags: dict[str, str | None], key: str, family: str) -> int:
    try:
        value = EF.read(flags, key, family, None)
    except EF.FlagValueError:
        return 1
    return value if isinstance(value, int) else 1
