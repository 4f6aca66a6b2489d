"""GPUStack's own evaluation beside gsg's (GSG050-GSG052): emitted by `--server-check`, which asks the live
server (adapters/gpustack/evaluations.py), so no check runs on the stage results."""

from __future__ import annotations

from gpustack_guard.core.findings import Rule, Severity

SERVER_CHECK = "the server check (adapters/gpustack/evaluations.py, `gsg validate --server-check`)"

SERVER_DISAGREES = Rule(
    "GSG050", "server-disagrees", "GPUStack's own evaluation disagrees with gsg's.", Severity.WARNING,
    what="A spec that GPUStack's /v2/model-evaluations calls compatible while gsg reports an error, or the other "
         "way round.",
    why="GPUStack's estimate is weights x 1.2 + 2 GiB and ignores context, KV x concurrency and CUDA graphs: when "
        "it says yes and gsg says no, the deployment would be scheduled and then OOM. When GPUStack says no and "
        "gsg has no error, gsg is missing something the server knows (a label, a backend).",
    example="gsg validate specs/ --server https://gpustack.example --server-check",
    fix="Read both verdicts; fix the spec for gsg's error, or report the disagreement if gsg is wrong.",
    emitted_by=SERVER_CHECK)

SERVER_UNAVAILABLE = Rule(
    "GSG051", "server-evaluation-unavailable", "GPUStack could not evaluate the spec.", Severity.INFO,
    what="A spec GPUStack's evaluation endpoint did not judge: an API error, the rate limit (50 evaluations per "
         "10 s), or an evaluation error such as an unknown model or an offline Hugging Face.",
    why="Only gsg's verdict is available for this spec.",
    example="gsg validate specs/ --server https://gpustack.example --server-check",
    fix="Retry later, or give the server access to the model source.",
    emitted_by=SERVER_CHECK)

SERVER_AGREES = Rule(
    "GSG052", "server-evaluation", "GPUStack's own evaluation, shown beside gsg's.", Severity.INFO,
    what="GPUStack's verdict (compatible, and the VRAM it would book) when it agrees with gsg.",
    why="Shows what the scheduler will book, beside gsg's arithmetic.",
    example="gsg validate specs/ --server https://gpustack.example --server-check",
    fix="Nothing to fix: informational.",
    emitted_by=SERVER_CHECK)

RULES = (SERVER_DISAGREES, SERVER_UNAVAILABLE, SERVER_AGREES)
