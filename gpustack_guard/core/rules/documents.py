"""Rules about the files, the spec fields and the backend arguments (GSG001-GSG019): most are emitted by the
loader, the spec check or rendering, which stop at them; GSG005 and GSG016 also read the stage results."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Iterator

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
         "belongs, a missing `name`, 100000 replicas.",
    why="GPUStack answers such a document with a 422 at apply time, or worse accepts an absurd value and "
        "schedules it.",
    example="name: bad-replicas\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
            "replicas: \"two\"",
    fix="Give the field a value of the type and range the message names.",
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
    "GSG004", "enum-spelling", "An enum value is not spelled exactly as GPUStack expects.",
    what="An enum value (source, backend, placement_strategy, …) that differs from GPUStack's spelling, often only "
         "by case.",
    why="GPUStack compares enum values exactly: `backend: vllm` is booked as a Custom backend, with none of "
        "vLLM's handling.",
    example="name: lowercase-vllm\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
            "backend: vllm",
    fix="Spell the value exactly as the message suggests (vLLM, SGLang, llama.cpp, huggingface, …).",
    emitted_by=CHECK)


def _unique_names(results: Results) -> Iterator[Finding]:
    """Model names are unique per organisation; gsg checks them per cluster."""
    seen: dict[tuple, list[Evaluation]] = defaultdict(list)
    for ev in results.evaluations:
        cluster = ev.cluster.name if ev.cluster else ev.rendered.spec.cluster_name
        seen[(cluster, ev.rendered.name)].append(ev)
    for (cluster, name), group in seen.items():
        first = group[0].rendered.doc
        for ev in group[1:]:
            yield finding(DUPLICATE_NAME, ev.rendered.doc.at("name"),
                          f"model name '{name}' is already declared at {first.at('name')}"
                          + (f" for cluster '{cluster}'" if cluster else ""), spec=name, fix="rename one of them")


DUPLICATE_NAME = Rule(
    "GSG005", "duplicate-name", "Two specs declare the same model name in one cluster.",
    what="Two spec documents with the same `name` for the same cluster (documents apply in wave, then file order; "
         "the later one is reported).",
    why="GPUStack keys models by name: the second apply overwrites the first deployment instead of adding one.",
    example="name: twin\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n---\nname: twin\n"
            "huggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct",
    fix="Rename one of them.",
    check=_unique_names)

SOURCE_ID = Rule(
    "GSG006", "source-id", "The source's id field (repo id, model id or local path) is missing.",
    what="A `source` without its id field: huggingface needs huggingface_repo_id, model_scope needs "
         "model_scope_model_id, local_path needs local_path.",
    why="GPUStack cannot download or find the model; the deployment fails after it was accepted.",
    example="name: no-repo\nsource: huggingface\nhuggingface_filename: model.gguf",
    fix="Add the id field the message names.",
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

TEMPLATE = Rule(
    "GSG011", "template", "The guard template does not exist, does not parse or uses an undefined variable.",
    what="A `guard.template` that no template folder holds, whose Jinja does not parse, that reads an undefined "
         "variable or that renders a malformed backend argument.",
    why="Without the template the pinned arguments are unknown, so neither the arguments nor the memory can be "
        "checked.",
    example="guard:\n  template: no-such-template",
    fix="Name a template of templates/ (or of --templates DIR), fix its syntax at the reported line, or give the "
        "variable a default.",
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
    "GSG013", "forbidden-argument", "A backend argument GPUStack rejects (--port, --api-key, --served-model-name).",
    what="A backend argument GPUStack sets itself for every instance: --port, --api-key, --served-model-name.",
    why="GPUStack refuses the deployment or the instance fails to start with a conflicting argument.",
    example="backend_parameters:\n  - --port=8000",
    fix="Remove the argument.",
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
    what="A `backend` that is neither one of GPUStack's built-in backends nor a known community backend.",
    why="GPUStack needs the backend registered on the server, and gsg can check it only like Custom (weights only).",
    example="backend: TurboServe",
    fix="Use a built-in backend name, or register the custom backend in GPUStack first.",
    emitted_by=CHECK)


@per_spec
def _unreadable_argument(ev: Evaluation) -> Iterator[Finding]:
    """The engine arithmetic could not read a value rendering let through (for instance a template default)."""
    failure = ev.failure
    if failure is not None and failure.reason is NoEstimate.BAD_ARGUMENTS:
        yield finding(ARG_VALUE, failure.location, failure.message, spec=ev.rendered.name)


ARG_VALUE = Rule(
    "GSG016", "argument-value", "A backend argument's value is one the engine refuses, or its flag is not a flag.",
    what="A backend argument whose value the engine's own parser or its range check refuses (--max-model-len 1e5 "
         "for argparse int, --gpu-memory-utilization nan or 1.7 outside (0, 1], --max-num-seqs 0, -np 0 for "
         "llama.cpp), a value that is not one of its choices (--kv-cache-dtype), or a flag written with a "
         "look-alike character (an en dash, a no-break space between flag and value).",
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
         "laughs\" document), mappings or lists nested more than 64 levels, more than 10,000 documents in one file, a "
         "spec file over 4 MiB (a fleet snapshot over 32 MiB), a single value over 65,536 characters or a number "
         "over 1,000 characters. The file is refused before its values are built; the other files are checked.",
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

RULES = (YAML_SYNTAX, SCHEMA, UNKNOWN_FIELD, ENUM_SPELLING, DUPLICATE_NAME, SOURCE_ID, GPU_ID_FORMAT,
         SERVER_MANAGED, DUPLICATE_KEY, TEMPLATE, PINNED_CONFLICT, FORBIDDEN_ARG, DUPLICATE_ARG, BACKEND_UNKNOWN,
         ARG_VALUE, INPUT_LIMIT, EMPTY_SPEC, UNREADABLE_FILE)
