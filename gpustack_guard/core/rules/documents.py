"""Rules about the files, the spec fields and the backend arguments (GSG001-GSG019, GSG055): most are emitted by the
loader, the spec check or rendering, which stop at them; GSG005, GSG016 and GSG055 also read the stage results."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Iterator

from gpustack_guard.core import echo
from gpustack_guard.core.echo import LOOKALIKES as _LOOKALIKES  # noqa: F401 - read by its test
from gpustack_guard.core.echo import name_skeleton
from gpustack_guard.core.findings import Finding, Rule, Severity, finding
from gpustack_guard.core.memory.estimate import NoEstimate
from gpustack_guard.core.rules import per_spec

if TYPE_CHECKING:
    from gpustack_guard.core.stages.results import Evaluation, Results

LOADER = "the spec loader (adapters/files/spec_loader.py)"
CHECK = "the spec check (core/spec/check.py)"
RENDER = "rendering (core/render.py)"

YAML_SYNTAX = Rule(
    "GSG001", "yaml-syntax", "The file is not valid YAML.",
    what="A spec file that YAML cannot parse: an unclosed bracket or quote (reported where it opens, with where the "
         "parser noticed it), a tab in the indentation, `key: value: x`, an undefined alias or a duplicate anchor, "
         "an invalid timestamp, a NUL or other control character (at its own line and column).",
    why="Nothing in the file can be checked or deployed; CI should stop here rather than apply a partial set.",
    example="name: broken\nsource: huggingface\nhuggingface_repo_id: [Qwen/Qwen2.5-7B-Instruct\nbackend: vLLM",
    fix="Correct the syntax at the reported line and column (the parser's own message says what it expected); "
        "indent with spaces; quote a value that holds ': ' or starts with a YAML character.",
    emitted_by=LOADER)

SCHEMA = Rule(
    "GSG002", "schema", "A field has the wrong type, a missing required value or an absurd number.",
    what="A field whose value GPUStack's ModelCreate would reject or that is certainly a typo: text where a number "
         "belongs, a missing `name`, 100000 replicas; an `env` name that is not a variable name (`MY-VAR`, "
         "`1X`), or an `env` value holding a NUL byte, another control character, or a "
         "one-line value ending in the line break a YAML `|` block leaves (line breaks inside a multi-line value such "
         "as a PEM key are fine); or a `gpu_type_selector` that contradicts `gpu_selector` (gpu_ids, more than one "
         "GPU per replica) or itself (a partition profile with slice percentages, cores sliced without memory); "
         "a gpu id listed twice; an unquoted number YAML 1.1 and 1.2 read differently (`1:30` is base 60, 90; "
         "`010` base 8, 8), and a key or text field YAML read as a boolean, number or null (`name: no`).",
    why="GPUStack answers such a document with a 422 at apply time, or worse accepts an absurd value and "
        "schedules it. A process environment cannot carry a NUL, shells and most programs cannot read a name "
        "with '-', and a trailing line break becomes part of a token or URL. (An env value is never shown in the "
        "message: it may be a secret.)",
    example="name: bad-replicas\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
            "replicas: \"two\"\nenv:\n  VLLM-LOGGING-LEVEL: DEBUG",
    fix="Give the field a value of the type and range the message names; rename an env variable to letters, "
        "digits and '_' (the message suggests one); write a one-line env value without `|` (or with `|-`).",
    emitted_by=CHECK)

UNKNOWN_FIELD = Rule(
    "GSG003", "unknown-field", "A field GPUStack does not know (GPUStack would silently drop it).",
    what="A top-level or nested field that is not part of GPUStack's deployment document (nor of `guard:`).",
    why="GPUStack ignores unknown fields without a word, so a misspelt setting (schedule_type, gpu_selectors) "
        "never takes effect.",
    example="name: typo\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\nschedule_type: spread",
    fix="Use the field name the message suggests, or remove the field.",
    emitted_by=CHECK)

ENUM_SPELLING = Rule(
    "GSG004", "enum-spelling", "An enum value or backend name is a near-miss of the spelling GPUStack expects.",
    what="An enum value (source, backend, placement_strategy, categories, extended_kv_cache.mode, "
         "speculative_config.algorithm, guard.policy settings) that is one of the known values once look-alike "
         "letters (a Cyrillic 'М' in `vLLМ`), invisible characters (zero-width space), leading or trailing and "
         "no-break spaces, case (`vllm`, `Sglang`) and separators (`llama-cpp`, `llamacpp`) are set aside. Other "
         "wrong enum values are reported here too, with the closest known value; a backend name that is near no "
         "known one is GSG015 (a community or custom backend).",
    why="GPUStack compares enum values exactly: `backend: vllm` or `vLLM ` is booked as a Custom backend, with "
        "none of vLLM's handling, and `llama-cpp` finds no backend. A look-alike letter or an invisible character "
        "is invisible in review, so the message names it (code point and Unicode name).",
    example="name: homoglyph\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
            "backend: vLL\u041c  # Cyrillic М",
    fix="Retype the value exactly as the message suggests (vLLM, SGLang, llama.cpp, huggingface, binpack, …), in "
        "ASCII and without surrounding spaces.",
    emitted_by=CHECK)

def _unique_names(results: Results) -> Iterator[Finding]:
    """Model names are unique per organisation; gsg checks them per cluster."""
    seen: dict[tuple, list[Evaluation]] = defaultdict(list)
    for ev in results.evaluations:
        cluster = ev.cluster.name if ev.cluster else ev.rendered.spec.cluster_name
        seen[(cluster, ev.rendered.name)].append(ev)
    looks: dict[tuple, tuple[str, Evaluation]] = {}
    for (cluster, name), group in seen.items():
        first = group[0].rendered.doc
        for ev in group[1:]:
            yield finding(DUPLICATE_NAME, ev.rendered.doc.at("name"),
                          f"model name '{echo.value(name)}' is already declared at {first.at('name')}"
                          + (f" for cluster '{cluster}'" if cluster else ""), spec=name, fix="rename one of them")
        other = looks.setdefault((cluster, name_skeleton(name)), (name, group[0]))
        if other[0] != name:
            yield finding(DUPLICATE_NAME, first.at("name"),
                          f"model name '{echo.value(name)}' looks the same as '{echo.value(other[0])}' declared at "
                          f"{other[1].rendered.doc.at('name')} (letter case, compatibility forms or look-alike "
                          "letters): a person cannot tell which one they call", spec=name,
                          fix="rename one of them so that the two differ visibly")


DUPLICATE_NAME = Rule(
    "GSG005", "duplicate-name", "Two specs declare the same model name in one cluster.",
    what="Two spec documents with the same `name` for the same cluster (documents apply in wave, then file order; "
         "the later one is reported), or with names that only look the same: they differ in letter case, in "
         "compatibility forms (fullwidth letters), in Cyrillic or Greek look-alike letters or in invisible "
         "characters.",
    why="GPUStack keys models by name: the second apply overwrites the first deployment instead of adding one.",
    example="name: twin\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n---\nname: twin\n"
            "huggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct",
    fix="Rename one of them.",
    check=_unique_names)

SOURCE_ID = Rule(
    "GSG006", "source-id", "The source's id field (repo id, model id or local path) is missing or malformed.",
    what="A `source` without its id field (huggingface needs huggingface_repo_id, model_scope needs "
         "model_scope_model_id, local_path needs local_path), or one the hub or the workers cannot use: a repo id "
         "that breaks the hub's rules (`name` or `namespace/name` of ASCII letters, digits, '-', '_', '.'; a name of "
         "at most 96 characters; no '--' or '..'; no part starting or ending with '-' or '.'; not ending in "
         "'.git'), a hub URL pasted as the id (huggingface.co, hf.co, modelscope.cn), a `huggingface_filename` or "
         "`model_scope_file_path` that is absolute or climbs out with '..', and a `local_path` that is relative, "
         "starts with '~' or is a Windows path. A field of another source beside the source's own "
         "(model_scope_model_id under source: huggingface) is a warning: GPUStack stores it unread.",
    why="GPUStack cannot download or find the model; the deployment fails after it was accepted. GPUStack's "
        "server and workers open `local_path` as written, on their own file system and from their own working "
        "directory, without a shell: only an absolute POSIX path names the same file everywhere.",
    example="name: hf-url\nsource: huggingface\nhuggingface_repo_id: https://huggingface.co/Qwen/Qwen2.5-7B-Instruct",
    fix="Add the id field the message names, or write the id the message gives (for a hub URL: its "
        "`namespace/name`, and the file of a /blob/ URL as huggingface_filename); give local_path as the absolute "
        "path on the workers.",
    emitted_by=CHECK)

GPU_ID_FORMAT = Rule(
    "GSG007", "gpu-id-format", "A gpu_ids entry is not `worker:type:index`.",
    what="A gpu_selector.gpu_ids entry that is not of GPUStack's form worker-name:type:index (gpu-a:cuda:0).",
    why="GPUStack matches GPU ids as text: a malformed id matches no GPU and the model never schedules.",
    example="gpu_selector:\n  gpu_ids:\n    - gpu-a-0",
    fix="Write the id as worker:type:index, as `gsg snapshot` or the GPUStack UI shows it.",
    emitted_by=CHECK)

SERVER_MANAGED = Rule(
    "GSG009", "server-managed-field", "A field only the server sets appears in a spec.",
    what="A field that GPUStack sets itself (id, created_at, ready_replicas, …), usually left over from an export "
         "of the live model.",
    why="The server overwrites or rejects it; in git it only misleads the reader about what is deployed.",
    example="name: with-id\nid: 42\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct",
    fix="Remove the field (`gsg export` writes specs without them).",
    emitted_by=CHECK)

DUPLICATE_KEY = Rule(
    "GSG010", "duplicate-key", "A YAML mapping repeats a key (YAML parsers keep only the last).",
    what="A mapping that names the same key twice.",
    why="YAML parsers silently keep the last value, so the first one, which a reviewer may read, has no effect.",
    example="name: dup-key\nreplicas: 1\nreplicas: 2",
    fix="Keep one of the two keys.",
    emitted_by=CHECK)

TEMPLATE_SHADOWED = Rule(
    "GSG028", "template-shadowed", "The guard template used hides another of the same name further down the "
    "search path.",
    what="A `guard.template` name found in more than one templates folder: the spec folder's or a folder above "
         "it up to the repository root (the folder with .git; outside a repository, the folder above gsg.yaml's), "
         "and the templates gsg ships. The nearest one is used; the finding names it and the ones it hides.",
    why="A repository's `vllm-hardened` and gsg's own of the same name differ in what they pin. Which one a spec "
        "gets must be a decision someone made, not an accident of folder layout: reviewers reading the shipped "
        "template would check the wrong arguments.",
    example="# specs/templates/vllm-hardened.yaml.j2 beside gsg's shipped vllm-hardened\n"
            "name: chat\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
            "guard:\n  template: vllm-hardened",
    fix="Rename the repository's template (e.g. `acme-vllm-hardened`), or delete it to use the shipped one; "
        "`gsg render` shows which file each spec used.",
    severity=Severity.WARNING,
    emitted_by=RENDER)

TEMPLATE = Rule(
    "GSG011", "template", "The guard template does not exist, does not parse, fails, passes a sandbox limit, or a "
    "guard.vars key is never read.",
    what="A `guard.template` that no template folder holds or whose name is a path (`../x`, `a/b`, `/x`, `~`), "
         "whose Jinja does not parse, that reads an undefined variable, renders a malformed backend argument or "
         "stops at a sandbox limit (10,000 loop iterations, range() of 1,000, calls 20 deep, 1,000 macro calls, "
         "32 template loads, 30 levels of nesting, 64 KiB output or file, 256-bit integers, 64 KiB strings); or a "
         "`guard.vars` key the template never reads (read from Jinja's syntax tree, included and imported "
         "templates too).",
    why="Without the template the pinned arguments are unknown, so neither the arguments nor the memory can be "
        "checked. Templates come from pull requests: a loop of a million iterations or a template including itself "
        "must stop with an error, not hang CI. A misspelt variable (`gpu_memory_utilisation`) is silently ignored "
        "and the template's default is deployed.",
    example="guard:\n  template: vllm-hardened\n  vars:\n    gpu_memory_utilisation: 0.8   # reads "
            "gpu_memory_utilization",
    fix="Name a template of templates/ (or of --templates DIR) by its file name, fix its syntax at the reported "
        "line, give the variable a default, keep loops and recursion within the limits the message names, or "
        "rename the guard.vars key as the did-you-mean says.",
    emitted_by=RENDER)

PINNED_CONFLICT = Rule(
    "GSG012", "pinned-conflict", "A backend argument contradicts one the template pins.",
    what="A backend_parameters entry that sets a flag the guard template pins to another value.",
    why="Templates pin what was measured to be safe (gpu-memory-utilization, max-model-len); overriding one "
        "silently voids that review.",
    example="backend_parameters:\n  - --gpu-memory-utilization 0.95\nguard:\n  template: vllm-hardened",
    fix="Remove the argument or set it to the pinned value.",
    emitted_by=RENDER)

FORBIDDEN_ARG = Rule(
    "GSG013", "forbidden-argument", "A backend argument GPUStack rejects (--port, --api-key, --served-model-name, "
    "--gpu-layers outside 0-999).",
    what="A backend argument GPUStack sets itself for every instance (--port, --api-key, --served-model-name), or "
         "one its admission check refuses: --gpu-layers / -ngl / --n-gpu-layers that is not a whole number 0-999 "
         "(`auto`, `all`, `-1`, `1000`), or 0 together with gpu_selector.gpu_ids (in backend_parameters or "
         "rendered by the template).",
    why="GPUStack refuses the deployment (400 on create and update) or the instance fails to start with a "
        "conflicting argument; GPUStack checks --gpu-layers itself, before the engine reads it, so a value a "
        "recent llama.cpp accepts (`-ngl auto`) is still refused.",
    example="backend_parameters:\n  - --port=8000\n  - -ngl auto",
    fix="Remove the argument; give --gpu-layers a number 0-999 (999: every layer), or drop gpu_ids for a CPU-only "
        "deployment.",
    emitted_by=RENDER)

DUPLICATE_ARG = Rule(
    "GSG014", "duplicate-argument", "A backend argument is given twice with different values.", Severity.WARNING,
    what="The same backend flag twice with different values (also --a_b beside --a-b).",
    why="The engine takes the last one; a reviewer reading the first one is misled.",
    example="backend_parameters:\n  - --max-model-len=8192\n  - --max_model_len 4096",
    fix="Keep one.",
    emitted_by=RENDER)

BACKEND_UNKNOWN = Rule(
    "GSG015", "backend-unknown", "The backend is neither built in nor a known community backend.", Severity.WARNING,
    what="A `backend` that is neither one of GPUStack's built-in backends nor a known community backend, nor a "
         "near-miss of one (those are GSG004 errors: `vLLM `, `vllm`, `llama-cpp`).",
    why="GPUStack needs the backend registered on the server, and gsg can check it only like Custom (weights only).",
    example="backend: TurboServe",
    fix="Use a built-in backend name, or register the custom backend in GPUStack first.",
    emitted_by=CHECK)


@per_spec
def _unreadable_argument(ev: Evaluation) -> Iterator[Finding]:
    """The engine arithmetic could not read a value rendering let through (for instance a template default)."""
    failure = ev.failure
    if failure is not None and failure.reason is NoEstimate.BAD_ARGUMENTS:
        yield finding(ARG_VALUE, failure.location, failure.message, spec=ev.rendered.name,
                      severity=Severity.WARNING if failure.warning else None)


ARG_VALUE = Rule(
    "GSG016", "argument-value", "A backend argument's value is one the engine refuses, or its flag is not a flag.",
    what="A backend argument whose value the engine's own parser or its range check refuses (--max-model-len 1e5 "
         "for argparse int, --gpu-memory-utilization nan or 1.7 outside (0, 1], --max-num-seqs 0, -np 0 for "
         "llama.cpp), a value that is not one of the release's choices, compared as argparse does, case and all "
         "(--kv-cache-dtype=FP8, --dtype= and, up to 0.12, --quantization= on vLLM; from 0.13 a --quantization name "
         "vLLM does not build in is a warning, since a plugin may register it, and so from 0.33 is a "
         "--kv-cache-dtype name outside its list, or one whose layout gsg has not read), a switch given a value "
         "(--enforce-eager=false, llama.cpp's -nkvo false or, before b6325, -fa on) or an on|off flag given none "
         "(llama.cpp's bare -fa from b6325, --fit), a flag written with a look-alike character (an en dash, a "
         "no-break space between flag and value) or with dashes the engine "
         "does not read it after (vLLM's -max-model-len, llama.cpp's --ngl or -ctx-size), an item GPUStack's worker "
         "cannot split into arguments (a quote left open), or another engine's sizing flag (vLLM's "
         "--max-model-len on SGLang, SGLang's --mem-fraction-static on vLLM). Items are read as the worker splits "
         "them: `--max-num-seqs 16 --max-model-len 4096` in one item is two flags.",
    why="The engine exits at startup on a value it refuses, and reads a flag with a look-alike character as an "
        "unknown one; gsg reads each numeric flag as the engine release does (vLLM's 16k / 16K, llama.cpp's "
        "std::stoi) and computes nothing on a default in place of a refused value.",
    example="backend_parameters:\n  - --max-model-len=lots",
    fix="Give the argument a value of the range the message names (for the spec's engine release), or retype the "
        "character the message names in ASCII.",
    check=_unreadable_argument, emitted_by=f"{RENDER}; values only the engine arithmetic reads by the estimation stage")

INPUT_LIMIT = Rule(
    "GSG017", "input-limit", "A YAML file is larger, deeper or expands further than any spec (a loader limit).",
    what="A file beyond one of the loader's limits: aliases that expand to more than 10,000 nodes (the \"billion "
         "laughs\" document), mappings or lists nested more than 64 levels, more than 100,000 documents in one file, a "
         "spec file over 16 MiB (a fleet snapshot over 32 MiB), a single value over 65,536 characters, a key over "
         "1,024 (YAML's own limit) or a number over 1,000 characters, a list or mapping of more than 4,096 items "
         "in a spec (100,000 in a fleet snapshot), or more than 1,500,000 values in one file. The file is refused "
         "before its values are built; "
         "the other files are checked.",
    why="gsg runs in CI on whatever a pull request contains: a 1 KB file of nested aliases expands to a billion "
        "values and would run the job out of time or memory. No real spec comes near these limits (a spec is a "
        "few dozen lines nested four deep), so the file is a mistake or an attack either way.",
    example="name: lol\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]"
            "\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
    fix="Write the values out, or share less through aliases; split a file of many documents; keep generated "
        "data out of the spec folder.",
    emitted_by=LOADER)

EMPTY_SPEC = Rule(
    "GSG018", "empty-spec", "A spec file holds no document (empty, only comments or only `---`).",
    what="A *.yaml / *.yml file in the spec paths that YAML reads as no document at all: zero bytes, only "
         "comments, only `---` separators.",
    why="A pull request that truncates a spec file (a bad merge, an editor crash) would otherwise pass CI with one "
        "spec fewer, and `apply --prune` would then delete the deployment it described.",
    example="# llama-70b: moved to another cluster\n---\n",
    fix="Restore the spec, or delete the file if the deployment is meant to go.",
    emitted_by=LOADER)

UNREADABLE_FILE = Rule(
    "GSG019", "unreadable-file", "A spec file or folder cannot be read (permissions, encoding, a broken link).",
    what="A path in the spec tree that gsg cannot read: a folder or file without read permission, a file that is "
         "not UTF-8 text (UTF-8 with a byte-order mark is read; UTF-16 is not), a broken symbolic link, a symbolic "
         "link loop, a FIFO or device named *.yaml. The other files are still checked.",
    why="Skipping such a path silently would let a pull request hide a spec from CI; stopping the whole run at it "
        "would hide every other finding.",
    example="name: caf\xe9  # saved as Latin-1: the byte 0xE9 is not UTF-8",
    fix="Fix the permission, save the file as UTF-8, or repair or remove the link.",
    emitted_by=LOADER)


@per_spec
def _engine_config_file(ev: Evaluation) -> Iterator[Finding]:
    """`--config FILE` on vLLM or SGLang: more arguments from a file on the worker, which gsg never sees."""
    r = ev.rendered
    if r.family not in ("vllm", "sglang") or r.flags.get("config") is None:  # a bare --config: no file to name
        return
    from gpustack_guard.core import args as A
    from gpustack_guard.core import engine_flags as EF
    from gpustack_guard.core.memory import profiles as P
    from gpustack_guard.core.rules.memory import flag_location
    from gpustack_guard.core.versions import parse_version

    version = r.spec.backend_version or P.DEFAULT_VERSIONS[r.family]
    engine = f"{EF.ENGINE_NAMES[r.family]} {version}"
    path = EF.shown(r.flags["config"])
    location = flag_location(ev, "config")
    item = _own_item(r.spec.backend_parameters, "config", r.family, r.spec.backend_version)
    if P.config_file_row(r.family, parse_version(version)) is not None and item is not None:
        try:
            tokens = A.worker_tokens(item)
        except ValueError:  # an item the worker cannot split is GSG016's
            tokens = []
        if any(token.startswith("--config=") for token in tokens):
            yield finding(ENGINE_CONFIG_FILE, location,
                          f"--config={path}: {engine} reads a config file only after --config given as an argument "
                          "of its own; --config=FILE is a plain option it stores, and the file's arguments are never "
                          "applied", spec=r.name,
                          fix=f"write --config and {path} as two items if the file should apply, or remove --config")
            return
    yield finding(ENGINE_CONFIG_FILE, location,
                  f"--config {path}: {engine} reads more arguments from this file on the worker at start-up; gsg "
                  "cannot read it, so the estimate and every check leave out the arguments it sets",
                  spec=r.name, fix="give those arguments in backend_parameters instead, where gsg sees them")


def _own_item(items: list[str] | None, key: str, family: str, version: str | None) -> str | None:
    """The spec's own backend_parameters item that gives the flag last, or None (a template gives it)."""
    from gpustack_guard.core import args as A

    try:
        parsed = A.parse(items, family, version)
    except A.ArgError:
        return None
    last = next((arg for arg in reversed(parsed) if arg.key == key), None)
    return None if last is None or items is None else items[last.index]


ENGINE_CONFIG_FILE = Rule(
    "GSG055", "engine-config-file", "An engine argument reads more arguments from a file gsg cannot see.",
    Severity.WARNING,
    what="`--config FILE` in a vLLM or SGLang spec's backend_parameters (or its template's): the engine reads more "
         "arguments from that YAML file on the worker when it starts. Also `--config=FILE` where the release's "
         "parser reads the file only after `--config` as an argument of its own (vLLM 0.6.4 to 0.30.0 and SGLang "
         "0.5.3 to 0.5.10 read: `\"--config\" in args`): there the file is stored as a plain option and never "
         "read.",
    why="The file can set --max-model-len, --gpu-memory-utilization, --tensor-parallel-size or any other flag gsg "
        "sizes the deployment by; gsg does not read files on the workers, so its estimate is that of the arguments "
        "it sees, and the deployment may start with others. With `--config=FILE` the file silently does nothing.",
    example="backend: vLLM\nbackend_parameters:\n  - --config\n  - /models/serve.yaml",
    fix="Give the arguments in backend_parameters, where gsg reads them; or accept the warning for a file whose "
        "arguments do not move memory (suppress GSG055 for the spec).",
    check=_engine_config_file)

RULES = (YAML_SYNTAX, SCHEMA, UNKNOWN_FIELD, ENUM_SPELLING, DUPLICATE_NAME, SOURCE_ID, GPU_ID_FORMAT,
         SERVER_MANAGED, DUPLICATE_KEY, TEMPLATE, TEMPLATE_SHADOWED, PINNED_CONFLICT, FORBIDDEN_ARG, DUPLICATE_ARG,
         BACKEND_UNKNOWN, ARG_VALUE, INPUT_LIMIT, EMPTY_SPEC, UNREADABLE_FILE, ENGINE_CONFIG_FILE)
