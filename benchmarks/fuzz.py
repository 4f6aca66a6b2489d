"""A throwaway crash hunter: mutates the repository's own good inputs (specs, fleets, workloads, contexts files,
templates, start-up logs, datasets, model configs) and runs every command over them in-process, the way a user
would. A case is a bug when it ends in a traceback or an internal error, exits 0 on input that cannot be valid,
fails without naming the file it read, prints a planted secret, or runs over --slow seconds.

    python benchmarks/fuzz.py --seed 1 --seconds 600            # every target, seeded, bounded in time
    python benchmarks/fuzz.py --target verify-log --cases 2000  # one target
    python benchmarks/fuzz.py --list

It is not a test (it runs for minutes); each bug it found is pinned by a small test in tests/. Findings are
written to --out (one folder per distinct bug: the input, the arguments, what the run printed)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

PLANTED_KEY = "gsk-fuzz-planted-key-5f3a9c1e77"  # the API key every run holds: it must never be printed
PLANTED_TOKEN = "hf_fuzzPlantedToken0123456789abcd"  # an HF_TOKEN-like value, likewise
SLOW_SECONDS = 5.0
HANG_SECONDS = 20  # a run still going then is stopped and reported as a hang


class Hang(BaseException):  # a BaseException: the CLI's own `except Exception` must not swallow it
    pass


# --- mutations ----------------------------------------------------------------------------------------------
@dataclass
class Case:
    data: bytes | None  # the file's bytes, or None when `special` says what the path is
    how: str
    garbage: bool = False  # no reading of this can be a valid file: exit 0 is a bug
    special: str | None = None  # fifo | dir | devzero | dangling | loop


YAML_TAG_VALUES = ["!!python/object:os.system {}", "!!python/object/apply:os.system ['true']", "!!binary aGk=",
                   "!!timestamp 2024-13-45", "!!timestamp 2024-01-01", "!!set {a, b}", "!!omap [a: 1]",
                   "!custom x", "!custom {a: 1}", "!!str", "!!int 1e3", "!!float abc", "!!bool maybe",
                   "!!map {a: 1}", "!!seq [1]", "!!null ''", "!<tag:yaml.org,2002:python/name:os.system> x",
                   "!!python/tuple [1, 2]", "!!merge x"]
GARBAGE_TAGS = ("!!python", "!!binary", "!custom", "!<tag", "!!set", "!!omap", "!!float abc", "!!bool maybe",
                "!!timestamp 2024-13")
ODD_VALUES = ["1e309", "-1e309", "1" + "0" * 5000, "-" + "9" * 5000, ".nan", ".inf", "-.inf", "-0", "-0.0",
              "0x7fffffffffffffffff", "0o777", "1_000", "0b101", "1e-400", "nan", "inf", "~", "null", "[]", "{}",
              "[1, [2, [3]]]", "{a: {b: c}}", "''", "\"\"", "true", "no", "'\u202egnp.exe'", "\"\\ud800\"",
              "\"\\x00\"", "\"a\\0b\"", "\"\\u200b\"", "a\u200bb", "\U0001F600", "\"\\t\\r\\n\"", "'%s%n'",
              "{{ vars.x }}", "&a 1", "*undefined_alias", "|\n  block\n  text", ">-\n  folded", "'" + "x" * 70000 + "'",
              "[" * 300 + "]" * 300, "{a: " * 300 + "1" + "}" * 300, "-1", "0", "2147483648", "18446744073709551617",
              "1.7976931348623157e308", "4.9e-324", "12GiB", "-12GiB", "1e999GiB", "NaNGiB", "0.0000001"]
GARBAGE_ROOTS = ["[]\n", "- a\n- b\n", "just a string\n", "42\n", "null\n", "~\n", "!!binary aGk=\n",
                 "&a [*a]\n", "a: &a\n  <<: *a\n", "a: &a [*a, *a]\nb: *a\n"]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _key_lines(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if re.match(r"^\s*(- )?[A-Za-z_][\w.-]*:", line)]


def _replace_value(rng: random.Random, text: str, value: str) -> str:
    lines = _lines(text)
    keyed = _key_lines(lines)
    if not keyed:
        return text + value + "\n"
    i = rng.choice(keyed)
    head = re.match(r"^(\s*(?:- )?[A-Za-z_][\w.-]*:)", lines[i])
    assert head
    lines[i] = head.group(1) + " " + value + "\n"
    return "".join(lines)


def yaml_mutations(rng: random.Random, text: str) -> Case:  # noqa: C901  (one branch per kind, in order)
    """One random mutation of a YAML (or YAML-like) text."""
    lines = _lines(text) or ["\n"]
    kind = rng.randrange(26)
    if kind == 0:
        cut = rng.randrange(len(lines) + 1)
        return Case("".join(lines[:cut]).encode(), f"truncate at line {cut}")
    if kind == 1:
        data = text.encode()
        cut = rng.randrange(len(data) + 1)
        return Case(data[:cut], f"truncate at byte {cut}")
    if kind == 2:
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        return Case(bytes(data), "byte flips")
    if kind == 3:
        keyed = _key_lines(lines)
        if keyed:
            i = rng.choice(keyed)
            lines.insert(i + 1, lines[i])
        return Case("".join(lines).encode(), "duplicated key line")
    if kind == 4:
        tag = rng.choice(YAML_TAG_VALUES)
        return Case(_replace_value(rng, text, tag).encode(), f"tag {tag}",
                    garbage=any(tag.startswith(g) for g in GARBAGE_TAGS))
    if kind in (5, 6, 7, 8):
        value = rng.choice(ODD_VALUES)
        return Case(_replace_value(rng, text, value).encode(), f"value {value[:40]!r}")
    if kind == 9:
        anchors = ["x: &a {k: 1}\ny: {<<: *a, k: 2}\n", "x: &a [1]\ny: {<<: *a}\n", "x: &a 1\ny: {<<: *a}\n",
                   "x: &a {k: 1}\ny: {<<: [*a, *a, *a]}\n", "<<: {name: merged}\n", "<<: [{a: 1}, 2]\n",
                   "x: &a\n  y: *a\n", "x: &a [*a]\n", "a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
                   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
                   "e: [*d, *d, *d, *d, *d, *d, *d, *d]\n", "<<: *nothing\n", "x: &a {<<: *a}\n"]
        extra = rng.choice(anchors)
        at = rng.choice([0, len(lines)])
        return Case(("".join(lines[:at]) + extra + "".join(lines[at:])).encode(), f"anchors {extra[:30]!r}")
    if kind == 10:
        depth = rng.choice([100, 1000, 5000, 20000])
        shape = rng.choice(["[" * depth + "]" * depth, "{a: " * depth + "1" + "}" * depth,
                            "".join("  " * i + "k:\n" for i in range(min(depth, 3000))) + "  " * min(depth, 3000)
                            + "v\n", "- " * depth + "x"])
        return Case(_replace_value(rng, text, shape).encode(), f"deep nesting {depth}")
    if kind == 11:
        bom = rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf\xef\xbb\xbf"])
        return Case(bom + text.encode(), f"BOM {bom!r}", garbage=bom in (b"\xff\xfe", b"\xfe\xff"))
    if kind == 12:
        if rng.random() < 0.5:
            return Case(text.encode("utf-16"), "UTF-16 file", garbage=True)
        return Case(text.replace("\n", "\r\n").encode(), "CRLF")
    if kind == 13:
        return Case(text.replace("\n", "\r").encode(), "CR only")
    if kind == 14:
        keyed = [i for i in range(len(lines)) if lines[i].startswith("  ")]
        if keyed:
            i = rng.choice(keyed)
            lines[i] = "\t" + lines[i].lstrip(" ")
        return Case("".join(lines).encode(), "tab indent", garbage=bool(keyed))
    if kind == 15:
        long = "x" * rng.choice([10_000, 200_000, 2_000_000])
        return Case(_replace_value(rng, text, long).encode(), f"long line {len(long)}")
    if kind == 16:
        return Case(rng.choice([b"", b"\n", b"---\n", b"---\n...\n", b"# only a comment\n", b"   \n\t\n"]),
                    "empty document")
    if kind == 17:
        docs = rng.choice([text + "---\n" + text, "---\n" + text + "---\n", text + "\n---\n", text + "...\n---\n"
                           + text, "---\n---\n" + text])
        return Case(docs.encode(), "several documents")
    if kind == 18:
        data = bytearray(text.encode())
        at = rng.randrange(len(data) + 1)
        bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf8\x88\x80\x80\x80"])
        return Case(bytes(data[:at] + bad + data[at:]), f"non-UTF-8 {bad!r}", garbage=True)
    if kind == 19:
        at = rng.randrange(len(text) + 1)
        char = rng.choice(["\x00", "\x07", "\x1b[31m", "\u202e", "\u200b", "\ufeff", "\u2028", "\x85", "\ud7ff",
                           "\U000e0041", "\x7f"])
        return Case((text[:at] + char + text[at:]).encode("utf-8", "surrogatepass"), f"char {char!r}",
                    garbage=char in ("\x00", "\x07"))
    if kind == 20:
        root = rng.choice(GARBAGE_ROOTS)
        return Case(root.encode(), f"root {root[:20]!r}", garbage=True)
    if kind == 21:  # a mapping value becomes a list or a scalar, a list a mapping
        value = rng.choice(["[a, b]", "{x: 1}", "7", "null", "- a", "'str'", "[[[]]]", "[{}]"])
        return Case(_replace_value(rng, text, value).encode(), f"wrong type {value}")
    if kind == 22:  # a key renamed to something odd
        keyed = _key_lines(lines)
        if keyed:
            i = rng.choice(keyed)
            odd = rng.choice(["? [a, b]", "? {a: 1}", "1", "null", "true", "\"\\u202ename\"", "\"a\\x00\"", "~",
                              "1.5", "[x]", "<<", "!!binary aGk="])
            lines[i] = re.sub(r"^(\s*(?:- )?)[A-Za-z_][\w.-]*", lambda m: m.group(1) + odd, lines[i], count=1)
        return Case("".join(lines).encode(), "odd key")
    if kind == 23:  # two mutations in a row
        first = yaml_mutations(rng, text)
        try:
            again = first.data.decode() if first.data is not None else text
        except UnicodeDecodeError:
            return first
        second = yaml_mutations(rng, again)
        if first.special or second.special:
            return first if first.special else second
        return Case(second.data, first.how + " + " + second.how, garbage=second.garbage)
    if kind == 24:
        special = rng.choice(["fifo", "dir", "devzero", "dangling", "loop"])
        return Case(None, f"special {special}", garbage=True, special=special)
    # remove a random line
    if lines:
        del lines[rng.randrange(len(lines))]
    return Case("".join(lines).encode(), "line removed")


def json_mutations(rng: random.Random, text: str) -> Case:
    kind = rng.randrange(10)
    if kind < 6:
        case = yaml_mutations(rng, text)
        # whitespace and line ends are no garbage in JSON; a combined case takes its garbage from its last step
        case.garbage = case.garbage and not case.how.split(" + ")[-1].startswith(("tab", "CR", "BOM"))
        return case
    values = ["1e309", "-1e309", "NaN", "Infinity", "-Infinity", "1" + "0" * 5000, "null", "[]", "{}", "\"x\"",
              "true", "-0", "1.5", "[" * 5000 + "]" * 5000, "\"\\ud800\"", "\"\\u0000\"", "18446744073709551617"]
    value = rng.choice(values)
    spots = [m.end() for m in re.finditer(r"\":\s*", text)]
    if not spots:
        return Case((value + text).encode(), f"json value {value[:30]}")
    at = rng.choice(spots)
    end = re.search(r"[,}\]\n]", text[at:])
    stop = at + (end.start() if end else 0)
    if kind == 9:  # duplicate the key before this spot
        start = text.rfind("\"", 0, text.rfind("\"", 0, at - 1))
        return Case((text[:stop] + ", " + text[start:stop] + text[stop:]).encode(), "json duplicated key")
    return Case((text[:at] + value + text[stop:]).encode(), f"json value {value[:30]}")


def log_mutations(rng: random.Random, text: str) -> Case:
    lines = _lines(text) or ["\n"]
    kind = rng.randrange(8)
    if kind == 0:  # change a number on a random line
        i = rng.randrange(len(lines))
        value = rng.choice(["0", "-1", "1e309", "nan", "inf", "9" * 400, "0.0", "-0", "1" * 25, "4294967296",
                            "18446744073709551616", "999999999999999999", "1000000000000000000", "123456789012345", "99999999999999999999999"])
        lines[i] = re.sub(r"\d+(\.\d+)?", value, lines[i], count=rng.randint(1, 3))
        return Case("".join(lines).encode(), f"log number {value[:20]}")
    if kind == 1:  # a line repeated many times
        i = rng.randrange(len(lines))
        return Case(("".join(lines[:i]) + lines[i] * rng.choice([2, 50, 5000]) + "".join(lines[i:])).encode(),
                    "log line repeated")
    if kind == 2:  # lines shuffled
        rng.shuffle(lines)
        return Case("".join(lines).encode(), "log shuffled")
    if kind == 3:  # only the lines that matter kept, with others' numbers swapped
        keep = [line for line in lines if re.search(r"\d", line)]
        rng.shuffle(keep)
        return Case("".join(keep[: rng.randint(0, len(keep))]).encode(), "log numbers only")
    return yaml_mutations(rng, text)


# --- targets ------------------------------------------------------------------------------------------------
SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()
TINY_CONFIG = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512,
                          "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
                          "num_key_value_heads": 8, "vocab_size": 1000, "max_position_embeddings": 2048,
                          "torch_dtype": "bfloat16"}, indent=1)
CONTEXTS = ("current-context: a\ncontexts:\n  a:\n    server: http://gpustack.test\n    api-key-env: FUZZ_KEY\n"
            "    overlay: p\n  b:\n    server: https://u:pw@gpustack.test/\n    fleet: ../fleet.yaml\n")
DATASETS = ['{"prompt_tokens": 812, "output_tokens": 128}\n{"prompt": "hello there", "output_tokens": 4}\n',
            '[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello, how"}]},\n'
            ' {"conversations": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a b c"}]}]\n',
            '{"text": "a prompt", "output_tokens_count": 3}\n{"prompt_tokens_count": 20, "max_tokens": 7}\n']
SOAK_WORKLOAD = "- {prompt_tokens: 20, max_tokens: 3}\n- {prompt_tokens: 60, max_tokens: 5, weight: 2}\n"


def _seeds(pattern: str) -> list[str]:
    return [p.read_text() for p in sorted(REPO.glob(pattern)) if p.is_file()]


@dataclass
class Target:
    name: str
    seeds: list[str]
    mutate: Callable[[random.Random, str], Case]
    path: str  # the mutated file, relative to the run's folder
    args: list[str]
    needle: str  # what the output must name when the run fails (or NAMED_ELSEWHERE)
    others: dict[str, str] = field(default_factory=dict)  # files beside it
    server: bool = False  # the in-memory GPUStack is the server
    soak: bool = False  # stop `gsg soak` after its offline part
    env: dict[str, str] = field(default_factory=dict)
    strict: bool = True  # a file no reading of which is valid must fail (logs are read leniently: not strict)


def _saved_plan_seed() -> tuple[str, dict[str, str]]:
    """A plan saved by `gsg plan --out` against the in-memory GPUStack, and the specs it names."""
    specs = {f"specs/{p.name}": p.read_text() for p in sorted((REPO / "specs").glob("*.yaml"))
             if p.name != "gsg.yaml"}
    target = Target("plan-out", [""], yaml_mutations, "unused", ["plan", "specs", "--offline", "--out", "plan.json"],
                    "", specs, server=True)
    root = Path(tempfile.mkdtemp(prefix="gsg-fuzz-seed-"))
    try:
        run_case(target, Case(b"", "seed"), root)
        return (root / "plan.json").read_text(), specs
    finally:
        shutil.rmtree(root, ignore_errors=True)


def targets() -> list[Target]:
    fleet = str(REPO / "examples" / "fleet.yaml")
    spec_seeds = _seeds("specs/*.yaml")[:0] + [t for t in _seeds("specs/*.yaml") if "project:" not in t] \
        + _seeds("examples/positive/*/spec.yaml")
    validate = ["validate", "specs", "--fleet", fleet, "--offline"]
    found = [Target(f"validate-{fmt}", spec_seeds, yaml_mutations, "specs/a.yaml", [*validate, "-o", fmt],
                    "a.yaml") for fmt in ("text", "json", "sarif", "junit", "markdown", "gitlab", "github", "html")]
    found += [
        Target("validate-fleet", _seeds("examples/fleet.yaml"), yaml_mutations, "fleet.yaml",
               ["validate", "specs", "--fleet", "fleet.yaml", "--offline"], "fleet.yaml", {"specs/a.yaml": SPEC}),
        Target("validate-project", _seeds("specs/gsg.yaml"), yaml_mutations, "specs/gsg.yaml",
               ["validate", "specs", "--offline"], "gsg.yaml",
               {"specs/a.yaml": SPEC, "examples/fleet.yaml": (REPO / "examples/fleet.yaml").read_text()}),
        Target("validate-overlay", ["name: llama-8b\nreplicas: 2\nbackend_parameters:\n  - --max-num-seqs=8\n"],
               yaml_mutations, "specs/overlays/p/a.yaml", [*validate, "--overlay", "p"], "a.yaml",
               {"specs/a.yaml": SPEC}),
        Target("validate-template", _seeds("templates/*.j2"), yaml_mutations, "tpl/vllm-hardened.yaml.j2",
               [*validate, "--templates", "tpl"], "vllm-hardened", {"specs/a.yaml": SPEC}),
        Target("templates-list", _seeds("templates/*.j2"), yaml_mutations, "tpl/mine.yaml.j2",
               ["templates", "--templates", "tpl"], "mine.yaml.j2", strict=False),  # a listing: rows say "(not read"
        Target("render", spec_seeds, yaml_mutations, "specs/a.yaml", ["render", "specs", "--offline", "-o", "json"],
               "a.yaml"),
        Target("render-out", spec_seeds, yaml_mutations, "specs/a.yaml",
               ["render", "specs", "--offline", "--out", "rendered.yaml"], "a.yaml"),
        Target("estimate-config", [TINY_CONFIG, *_seeds("examples/negative/*/config.json")], json_mutations,
               "model/config.json", ["estimate", "-m", "model/config.json", "--gpu-memory", "24GiB", "--offline"],
               "config.json"),
        Target("plan", spec_seeds, yaml_mutations, "specs/a.yaml", ["plan", "specs", "--offline"], "a.yaml",
               server=True),
        Target("drift", spec_seeds, yaml_mutations, "specs/a.yaml", ["drift", "specs", "--offline", "-o", "json"],
               "a.yaml", server=True),
        Target("verify-log", _seeds("tests/fixtures/logs/**/*.log"), log_mutations, "start.log",
               ["verify", "--log", "start.log", "--offline", "-o", "json"], "start.log", strict=False),
        Target("verify-log-model", _seeds("tests/fixtures/logs/vllm/*.log"), log_mutations, "start.log",
               ["verify", "--log", "start.log", "--offline", "-m", "meta-llama/Llama-3.1-8B-Instruct",
                "--gpu-memory", "24GiB"], "start.log", strict=False),
        Target("advise-workload", _seeds("workloads/*.yaml"), yaml_mutations, "w.yaml",
               ["advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory",
                "24GiB", "--offline"], "w.yaml"),
        Target("advise-observed", _seeds("tests/fixtures/vectors/*.json"), json_mutations, "obs.json",
               ["advise", "-m", "meta-llama/Llama-3.1-8B-Instruct", "-w", str(REPO / "workloads/chat.yaml"),
                "--gpus", "1", "--gpu-memory", "24GiB", "--offline", "--observed", "obs.json"], "obs.json"),
        Target("soak-dataset", DATASETS, json_mutations, "d.jsonl",
               ["soak", "--url", "http://127.0.0.1:9", "--model", "m", "--dataset", "d.jsonl"], "d.jsonl",
               soak=True),
        Target("soak-workload", [SOAK_WORKLOAD], yaml_mutations, "w.yaml",
               ["soak", "--url", "http://127.0.0.1:9", "--model", "m", "--workload", "w.yaml"], "w.yaml", soak=True),
        Target("config-view", [CONTEXTS], yaml_mutations, "gsg/config.yaml", ["config", "view"], "config.yaml"),
        Target("config-get", [CONTEXTS], yaml_mutations, "gsg/config.yaml", ["config", "get-contexts", "-o", "json"],
               "config.yaml"),
        Target("config-use", [CONTEXTS], yaml_mutations, "gsg/config.yaml", ["config", "use-context", "b"],
               "config.yaml"),
        Target("context-validate", [CONTEXTS], yaml_mutations, "gsg/config.yaml",
               ["validate", "specs", "--offline", "--fleet", fleet], "config.yaml", {"specs/a.yaml": SPEC},
               env={"GSG_CONTEXT": "a"}),
        Target("context-drift", [CONTEXTS], yaml_mutations, "gsg/config.yaml", ["drift", "specs", "--all-contexts"],
               "config.yaml", {"specs/a.yaml": SPEC}, server=True),
    ]
    found += [
        Target("render-check", _seeds("examples/rendered/*.yaml"), yaml_mutations, "rendered.yaml",
               ["render", "specs", "--offline", "--out", "rendered.yaml", "--check"], "rendered.yaml",
               {"specs/a.yaml": SPEC}, strict=False),  # a stale file is exit 1 whatever it holds
        Target("validate-fleet-json", [json.dumps(__import__("yaml").safe_load((REPO / "examples/fleet.yaml")
                                                                         .read_text()), indent=1)],
               json_mutations, "fleet.json", ["validate", "specs", "--fleet", "fleet.json", "--offline"],
               "fleet.json", {"specs/a.yaml": SPEC}),
        Target("advise-html", _seeds("workloads/*.yaml"), yaml_mutations, "w.yaml",
               ["advise", "-m", "Qwen/Qwen2.5-0.5B-Instruct", "-w", "w.yaml", "--gpus", "1", "--gpu-memory",
                "24GiB", "--offline", "-o", "html"], "w.yaml"),
        Target("soak-observed", _seeds("tests/fixtures/vectors/*.json"), json_mutations, "obs.json",
               ["soak", "--url", "http://127.0.0.1:9", "--model", "m", "--observed", "obs.json"], "obs.json",
               soak=True),
        Target("drift-markdown", spec_seeds, yaml_mutations, "specs/a.yaml",
               ["drift", "specs", "--offline", "-o", "markdown"], "a.yaml", server=True),
    ]
    plan, specs = _saved_plan_seed()
    found.append(Target("apply-plan", [plan], json_mutations, "plan.json", ["apply", "plan.json", "--yes"],
                        "plan.json", specs, server=True))
    return found


# --- running ------------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    code: int | None
    out: str
    err: str
    seconds: float
    escaped: str | None = None  # an exception that got past main()


def _place(path: Path, case: Case) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if case.special == "fifo":
        os.mkfifo(path)
    elif case.special == "dir":
        path.mkdir()
    elif case.special == "devzero":
        path.symlink_to("/dev/zero")
    elif case.special == "dangling":
        path.symlink_to(path.parent / "nowhere")
    elif case.special == "loop":
        path.symlink_to(path.name)
    else:
        assert case.data is not None
        path.write_bytes(case.data)


def _on_alarm(signum, frame):
    raise Hang()


def run_case(target: Target, case: Case, root: Path) -> Outcome:
    from gpustack_guard.cli import main

    for name, text in target.others.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _place(root / target.path, case)
    (root / "key").write_text(PLANTED_KEY + "\n")
    env = {"GSG_OFFLINE": "1", "GSG_CACHE_DIR": str(root / ".cache"), "HF_HOME": str(root / ".hf"),
           "GSG_CONFIG": str(root / "gsg" / "config.yaml"), "HF_TOKEN": PLANTED_TOKEN, "FUZZ_KEY": PLANTED_KEY,
           "GSG_API_KEY": PLANTED_KEY, **target.env}
    saved = {k: os.environ.get(k) for k in [*env, "GSG_URL", "GSG_CONTEXT", "GSG_OUTPUT", "GITHUB_ACTIONS"]}
    os.environ.update(env)
    for k in ("GSG_OUTPUT", "GITHUB_ACTIONS", *([] if "GSG_CONTEXT" in target.env else ["GSG_CONTEXT"])):
        os.environ.pop(k, None)
    patches: list[tuple[object, str, object]] = []
    if target.server:
        from support.fake_gpustack import FakeGPUStack

        import gpustack_guard.wiring as wiring

        server = FakeGPUStack.field_notes()
        server.api_key = PLANTED_KEY
        patches.append((wiring, "transport_factory", server.transport))
        os.environ["GSG_URL"] = "http://gpustack.test"
    else:
        os.environ.pop("GSG_URL", None)
    if target.soak:
        import gpustack_guard.commands.soak as soak_command

        async def offline_only(*args, **kwargs):  # the plan was made: the rest talks to a server
            return None

        patches.append((soak_command, "soak", offline_only))
    import gpustack_guard.wiring as wiring

    patches.append((wiring, "retry_sleep", lambda seconds: None))
    old = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    for obj, name, value in patches:
        setattr(obj, name, value)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(root)
    started = time.perf_counter()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_SECONDS)
    escaped, code = None, None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(target.args))
    except Hang:
        escaped = "hang"
    except BaseException as exc:  # noqa: BLE001  (what got past main is the finding)
        escaped = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        signal.alarm(0)
        seconds = time.perf_counter() - started
        os.chdir(here)
        for obj, name, value in old:
            setattr(obj, name, value)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Outcome(code, out.getvalue(), err.getvalue(), seconds, escaped)


# Errors that rightly name another file than the mutated one: a path the mutated file names (a fleet, an
# overlay folder), a spec folder left without specs, the model a config.json describes.
NAMED_ELSEWHERE = re.compile(r"fleet snapshot file not found|overlay '.*' not found|no spec files|"
                             r"not a regular file|: GSG0\d\d |error: GSG0\d\d ")


def judge(target: Target, case: Case, outcome: Outcome) -> str | None:
    """What is wrong with this run, as a short key that groups like bugs; None when it is fine."""
    text = outcome.out + outcome.err
    if outcome.escaped:
        return f"escaped {outcome.escaped.split(':')[0]}"
    # gsg's own traceback: Python's multi-line shape on stderr (a log line gsg quotes is one escaped line)
    if re.search(r"Traceback \(most recent call last\):\n\s+File ", outcome.err):
        return "traceback"
    internal = re.search(r"gsg: internal error: (\w+): ([^\n]{0,60})", outcome.err)
    if internal:
        return f"internal {internal.group(1)}: {re.sub(r'[0-9]+', 'N', internal.group(2))[:40]}"
    if PLANTED_KEY in text or PLANTED_TOKEN in text or ":pw@" in text:
        return "secret printed"
    if outcome.seconds > SLOW_SECONDS:
        return "slow"
    errors = [line for line in outcome.err.splitlines() if line.startswith("gsg: error:")]
    if len(errors) > 1:
        return "several error lines"
    # a tab or a control character in a Jinja comment is harmless (one in a flag is GSG016 of the spec)
    tab_in_jinja = target.path.endswith(".j2") and ("tab" in case.how or "char" in case.how)
    if outcome.code == 0 and case.garbage and target.strict and case.special != "dir" and not tab_in_jinja:
        return "exit 0 on garbage"
    if outcome.code not in (0, None) and errors and target.needle not in errors[0] \
            and not NAMED_ELSEWHERE.search(errors[0]):
        return f"error without the file: {re.sub(r'[0-9]+', 'N', errors[0])[:70]}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--cases", type=int, default=10**9)
    parser.add_argument("--target", action="append", help="only these targets (repeatable)")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "gsg-fuzz"))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--show", type=int, default=3, help="examples printed per distinct bug")
    opts = parser.parse_args()
    chosen = [t for t in targets() if not opts.target or t.name in opts.target]
    if opts.list:
        print("\n".join(f"{t.name:18} {len(t.seeds)} seeds  gsg {' '.join(t.args)}" for t in chosen))
        return 0
    if not chosen:
        print("no such target", file=sys.stderr)
        return 2
    os.environ["GSG_QUIET"] = "1"
    rng = random.Random(opts.seed)
    out_dir = Path(opts.out)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    deadline = time.monotonic() + opts.seconds
    counts: Counter[str] = Counter()
    bugs: dict[tuple[str, str], list[tuple[Case, Outcome]]] = {}
    runs = 0
    work = Path(tempfile.mkdtemp(prefix="gsg-fuzz-run-"))
    try:
        while runs < opts.cases and time.monotonic() < deadline:
            target = chosen[runs % len(chosen)]
            seed_text = rng.choice(target.seeds)
            case = target.mutate(rng, seed_text)
            root = work / str(runs)
            root.mkdir()
            outcome = run_case(target, case, root)
            runs += 1
            counts[target.name] += 1
            problem = judge(target, case, outcome)
            if problem:
                found = bugs.setdefault((target.name, problem), [])
                if len(found) < opts.show:
                    found.append((case, outcome))
                    folder = out_dir / f"{len(bugs):03d}-{target.name}"
                    folder.mkdir(exist_ok=True)
                    number = len(found)
                    if case.data is not None:
                        (folder / f"input-{number}").write_bytes(case.data)
                    (folder / f"run-{number}.txt").write_text(
                        f"problem: {problem}\nhow: {case.how}\nspecial: {case.special}\ngsg {' '.join(target.args)}"
                        f"\nexit: {outcome.code}  seconds: {outcome.seconds:.2f}\nescaped: {outcome.escaped}\n"
                        f"--- stdout\n{outcome.out[:4000]}\n--- stderr\n{outcome.err[:4000]}\n")
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{runs} cases, seed {opts.seed}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for (name, problem), examples in sorted(bugs.items()):
        case, outcome = examples[0]
        print(f"BUG {name}: {problem}  (e.g. {case.how[:60]}; exit {outcome.code}; "
              f"{outcome.err.strip().splitlines()[-1][:160] if outcome.err.strip() else ''})")
    print(f"{len(bugs)} distinct problems; inputs in {out_dir}")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
