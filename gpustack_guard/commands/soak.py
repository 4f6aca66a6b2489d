"""`gsg soak`: hold a fixed load on a live deployment for N rounds and tell why it degrades, if it does.

Rounds print as they finish (progress on stderr); with --out the JSON and report.html are rewritten after
every round, so an interrupt or a crash leaves the rounds so far on disk.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, GsgError
from gpustack_guard.core.units import parse_size

if TYPE_CHECKING:
    import httpx

FAIL_ON = ("never", "failing", "degraded", "slo")
OUTPUTS = ("text", "json")


@dataclass
class SoakOptions:
    url: str
    model: str
    rounds: int = 6
    round_seconds: float = 60.0
    concurrency: int = 8
    workload_file: str | None = None
    prompt_tokens: int = 512
    max_tokens: int = 128
    metrics_urls: list[str] = field(default_factory=list)
    pid: int | None = None
    reference_url: str | None = None
    reference_model: str | None = None
    reference_metrics_urls: list[str] = field(default_factory=list)
    memory_limit: str | None = None  # e.g. "64GiB": what the memory signal runs out at
    out_dir: str | None = None
    output: str = "text"
    fail_on: str = "failing"
    api_key_file: str | None = None
    reference_api_key_file: str | None = None  # else GSG_REFERENCE_API_KEY; else --url's key on --url's origin only
    seed: int = 0
    round_requests: int | None = None
    request_timeout: float = 120.0
    ca_bundle: str | None = None
    insecure: bool = False
    observed_file: str | None = None  # a verify report or recorded vector: the KV pool the engine allocated
    transport_factory: Callable[[], httpx.AsyncBaseTransport] | None = None  # tests: an httpx transport per client
    clock: Callable[[], float] = time.perf_counter  # tests: their event loop's virtual clock
    rate: float | None = None  # open loop: requests per second instead of --concurrency streams
    arrival: str | None = None  # poisson (default with --rate) | constant
    warmup_rounds: int = 0
    slo: str | None = None  # "ttft_p99=2s,itl_p99=80ms"
    sweep: str | None = None  # "rate:1,2,4,8" | "concurrency:4,8,16"
    dataset_file: str | None = None  # JSONL of prompts, lengths or ShareGPT conversations


def _urls(opts: SoakOptions) -> list[tuple[str, str]]:
    """(option, URL) of every endpoint the soak reads."""
    return [("--url", opts.url)] + ([("--reference-url", opts.reference_url)] if opts.reference_url is not None
                                    else []) + \
        [("--metrics-url", u) for u in opts.metrics_urls] + \
        [("--reference-metrics-url", u) for u in opts.reference_metrics_urls]


def _check_urls(opts: SoakOptions) -> None:
    from gpustack_guard.adapters.soak.load import other_endpoint
    from gpustack_guard.core.urls import bad_url

    for flag, url in _urls(opts):
        problem = bad_url(url)
        if problem is not None:  # the CLI refused it as a usage error already; this is for other callers
            raise GsgError(f"{flag} {problem}")
    for flag, url in _urls(opts)[:1 + (opts.reference_url is not None)]:  # the chat endpoints
        api = other_endpoint(url)
        if api is not None:
            raise GsgError(f"{flag} names the endpoint of {api}: gsg soaks chat completions (give the server's root, "
                           "its /v1 or its /v1/chat/completions)")


def _check(opts: SoakOptions) -> None:
    from gpustack_guard.core.soak.load_model import MAX_CONCURRENCY, MAX_REQUEST_TIMEOUT, MAX_ROUND_SECONDS

    _check_urls(opts)
    if not opts.model:
        raise GsgError("--model is empty: pass the model name the endpoint serves")
    if opts.rounds < 1:
        raise GsgError("--rounds must be at least 1")
    # `not a <= x <= b` also refuses nan, which passes every plain comparison
    if not 0.5 <= opts.round_seconds <= MAX_ROUND_SECONDS:
        raise GsgError(f"--round-seconds must be between 0.5 and {MAX_ROUND_SECONDS:g}")
    if not 0 < opts.request_timeout <= MAX_REQUEST_TIMEOUT:
        raise GsgError(f"--request-timeout must be more than 0 and at most {MAX_REQUEST_TIMEOUT:g} seconds")
    if not 1 <= opts.concurrency <= MAX_CONCURRENCY:
        raise GsgError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}")
    if opts.prompt_tokens < 1 or opts.max_tokens < 1:
        raise GsgError("--prompt-tokens and --max-tokens must be at least 1")
    from gpustack_guard.core.soak.prompts import prompt_length_problem

    if prompt_length_problem(opts.prompt_tokens):
        raise GsgError(f"--prompt-tokens: {prompt_length_problem(opts.prompt_tokens)}")
    _check_load_model(opts)
    if opts.output not in OUTPUTS:
        raise GsgError(f"--output {opts.output!r}: expected one of {', '.join(OUTPUTS)}")
    if opts.fail_on not in FAIL_ON:
        raise GsgError(f"--fail-on {opts.fail_on!r}: expected one of {', '.join(FAIL_ON)}")
    if opts.pid is not None and not Path(f"/proc/{opts.pid}").exists():
        raise GsgError(f"--pid {opts.pid}: no such process on this machine")
    if opts.memory_limit is not None:
        try:
            if parse_size(opts.memory_limit) <= 0:
                raise ValueError("it must be more than 0")
        except ValueError as exc:
            raise GsgError(f"--memory-limit {opts.memory_limit!r}: {exc}") from None
    if opts.reference_metrics_urls and not opts.reference_url:
        raise GsgError("--reference-metrics-url needs --reference-url")
    if opts.observed_file:  # read before the first round: a wrong file stops the soak before it starts
        from gpustack_guard.adapters.files.vectors import load_observed_kv

        load_observed_kv(opts.observed_file)
    if opts.ca_bundle and not Path(opts.ca_bundle).is_file():
        raise GsgError("CA bundle not found", where=opts.ca_bundle)
    if opts.out_dir:
        refuse_replacing_what_is_no_soak(opts.out_dir)


def _check_load_model(opts: SoakOptions) -> None:
    from gpustack_guard.core.soak.load_model import (
        ARRIVALS,
        MAX_RATE,
        MAX_ROUND_ARRIVALS,
        MAX_WARMUP_ROUNDS,
        parse_slos,
        parse_sweep,
    )

    if opts.rate is not None and not 0 < opts.rate <= MAX_RATE:
        raise GsgError(f"--rate must be more than 0 and at most {MAX_RATE:g} requests/s")
    if opts.arrival is not None and opts.arrival not in ARRIVALS:
        raise GsgError(f"--arrival {opts.arrival!r}: expected one of {', '.join(ARRIVALS)}")
    if not 0 <= opts.warmup_rounds <= MAX_WARMUP_ROUNDS:
        raise GsgError(f"--warmup-rounds must be between 0 and {MAX_WARMUP_ROUNDS}")
    for flag, text, parse in (("--slo", opts.slo, parse_slos), ("--sweep", opts.sweep, parse_sweep)):
        if text is not None:
            try:
                parse(text)
            except ValueError as exc:
                raise GsgError(f"{flag}: {exc}") from None
    sweep = parse_sweep(opts.sweep) if opts.sweep is not None else None
    if opts.arrival is not None and opts.rate is None and not (sweep and sweep.dimension == "rate"):
        raise GsgError("--arrival needs --rate (or --sweep rate:...): without a rate the load is closed-loop")
    if sweep is not None and opts.slo is None:
        raise GsgError("--sweep needs --slo: the sweep looks for the highest step that meets them")
    if sweep is not None and sweep.dimension == "rate" and opts.rate is not None:
        raise GsgError("--sweep rate:... sets the rate of each step: drop --rate")
    if sweep is not None and sweep.dimension == "concurrency" and opts.rate is not None:
        raise GsgError("--sweep concurrency:... is closed-loop: drop --rate")
    top_rate = sweep.values[-1] if sweep is not None and sweep.dimension == "rate" else opts.rate
    if top_rate is not None:
        sent_at_most = opts.round_requests if opts.round_requests is not None else math.inf
        arrivals = min(top_rate * opts.round_seconds, sent_at_most)
        if arrivals > MAX_ROUND_ARRIVALS:
            raise GsgError(f"{top_rate:g} requests/s for {opts.round_seconds:g} s schedules {arrivals:.0f} requests "
                           f"a round: at most {MAX_ROUND_ARRIVALS} (shorten --round-seconds or cap "
                           "--round-requests)")
    if opts.dataset_file and opts.workload_file:
        raise GsgError("--dataset and --workload both say what to send: give one")
    _limits()


def _limits():
    from gpustack_guard.core.soak.load_model import SoakLimits

    try:
        return SoakLimits.from_env(os.environ)
    except ValueError as exc:
        raise GsgError(str(exc)) from None


def _plan(opts: SoakOptions):
    from gpustack_guard.adapters.files.output import register_secret
    from gpustack_guard.adapters.soak.load import Target, chat_completions_url
    from gpustack_guard.adapters.soak.runner import SoakPlan
    from gpustack_guard.adapters.soak.workload import load_workload
    from gpustack_guard.core.secrets import url_secrets
    from gpustack_guard.core.soak.prompts import WorkloadEntry
    from gpustack_guard.wiring import read_api_key

    key = read_api_key(opts.api_key_file)
    for _, url in _urls(opts):  # a URL's password and tokens are masked wherever a server echoes them, too
        for secret in url_secrets(url):
            register_secret(secret)
    from gpustack_guard.adapters.soak.dataset import load_dataset
    from gpustack_guard.core.soak.load_model import parse_slos, parse_sweep

    limits = _limits()
    dataset = load_dataset(opts.dataset_file, opts.max_tokens, limits) if opts.dataset_file else None
    workload = dataset.entries if dataset else load_workload(opts.workload_file) if opts.workload_file else \
        [WorkloadEntry(opts.prompt_tokens, opts.max_tokens)]
    reference = Target("reference", chat_completions_url(opts.reference_url), opts.reference_model or opts.model,
                       _reference_key(opts, key)) if opts.reference_url else None
    return SoakPlan(
        target=Target("ours", chat_completions_url(opts.url), opts.model, key), rounds=opts.rounds,
        round_seconds=opts.round_seconds, concurrency=opts.concurrency, workload=workload, seed=opts.seed,
        round_requests=opts.round_requests, reference=reference, metrics_urls=list(opts.metrics_urls),
        reference_metrics_urls=list(opts.reference_metrics_urls),
        pid=opts.pid, request_timeout=opts.request_timeout,
        verify=False if opts.insecure else (opts.ca_bundle or True), transport_factory=opts.transport_factory,
        clock=opts.clock, rate=opts.rate, arrival=opts.arrival or "poisson", warmup_rounds=opts.warmup_rounds,
        slos=parse_slos(opts.slo) if opts.slo else (), sweep=parse_sweep(opts.sweep) if opts.sweep else None,
        max_in_flight=limits.max_in_flight, max_stored_samples=limits.max_stored_samples,
        max_round_gaps=limits.max_round_gaps,
        uniform_draw=dataset is not None, dataset=dataset)


def _reference_key(opts: SoakOptions, key: str | None) -> str | None:
    """The reference's own key (--reference-api-key-file, else GSG_REFERENCE_API_KEY); without one, --url's key
    only when the reference is on --url's origin (scheme, host and port: another model behind the same gateway).
    Before, --url's key went to any --reference-url, another host over plain HTTP in the README's own example."""
    from gpustack_guard.core.urls import origin
    from gpustack_guard.wiring import read_api_key

    own = read_api_key(opts.reference_api_key_file, "GSG_REFERENCE_API_KEY")
    if own is not None or opts.reference_url is None:
        return own
    return key if origin(opts.url) == origin(opts.reference_url) else None


def _settings(opts: SoakOptions, plan) -> dict:
    from gpustack_guard.core.secrets import mask_url

    dataset = plan.dataset
    return {"rounds": opts.rounds, "round_seconds": opts.round_seconds, "concurrency": opts.concurrency,
            "round_requests": opts.round_requests, "seed": opts.seed,
            "rate": plan.rate, "arrival": plan.arrival if plan.rate is not None or plan.sweep and
            plan.sweep.dimension == "rate" else None, "warmup_rounds": plan.warmup_rounds,
            "slo": {s.key + "_s": s.limit_s for s in plan.slos} or None,
            "sweep": {"dimension": plan.sweep.dimension, "steps": list(plan.sweep.values)} if plan.sweep else None,
            "max_in_flight": plan.max_in_flight,
            "dataset": {"file": dataset.path, "records": len(dataset.entries), "skipped": dataset.skipped,
                        "prompt_tokens_mean": round(sum(e.prompt_tokens for e in dataset.entries)
                                                    / len(dataset.entries), 1),
                        "max_tokens_mean": round(sum(e.max_tokens for e in dataset.entries)
                                                 / len(dataset.entries), 1)} if dataset else None,
            "workload": [] if dataset else [{"prompt_tokens": w.prompt_tokens, "max_tokens": w.max_tokens,
                                             "weight": w.weight} for w in plan.workload],
            "memory_limit": opts.memory_limit,
            "metrics_urls": [mask_url(u) for u in opts.metrics_urls],
            "reference_metrics_urls": [mask_url(u) for u in opts.reference_metrics_urls],
            "pid": opts.pid, "request_timeout_s": opts.request_timeout}


def build_report(opts: SoakOptions, plan, progress, interrupted: bool = False):
    from gpustack_guard.adapters.soak.scrape import host_memory_bytes
    from gpustack_guard.core.engine_knobs import family_of
    from gpustack_guard.core.secrets import mask_url
    from gpustack_guard.core.soak.load_model import sweep_best
    from gpustack_guard.core.soak.rounds import choose_memory_source, memory_column
    from gpustack_guard.core.soak.verdict import INCOMPLETE, classify
    from gpustack_guard.reporters.soak import SoakReport

    best = sweep_best(progress.steps) if plan.sweep else None
    # the verdict reads the measured rounds at one load: without a sweep, all but the warm-up; with one, those
    # of the highest step that met the SLOs (else the first step's: the lightest load tried)
    step = (best if best is not None else plan.sweep.values[0]) if plan.sweep else None
    judged = [r for r in progress.rounds if not r.warmup and r.step == step]
    judged_ref = [r for r in progress.reference if not r.warmup and r.step == step]
    source = choose_memory_source(judged)
    # the table, the JSON and the charts show the verdict's source for every round, warm-up and reference too
    # (a round without it shows none); with no judged round yet, the best source of the rounds there are
    shown = source if judged else choose_memory_source(progress.rounds)
    host = host_memory_bytes() if opts.pid is not None else None
    limit = parse_size(opts.memory_limit) if opts.memory_limit is not None else None
    engines = sorted({e for snap in progress.snapshots for e in snap.engines})
    verdict = classify(judged, source, judged_ref or None, host_memory_bytes=host,
                       memory_limit_bytes=limit, down_at_s=progress.down_at_s, engine=family_of(engines))
    if not judged and progress.rounds and verdict.verdict == INCOMPLETE:
        verdict.evidence = [f"only {len(progress.rounds)} warm-up round(s) completed: warm-up is left out of the "
                            "verdict"]
    report = SoakReport(mask_url(opts.url), opts.model, _settings(opts, plan), memory_column(progress.rounds, shown),
                        verdict, mask_url(opts.reference_url) if opts.reference_url else None,
                        opts.reference_model or (opts.model if opts.reference_url else None),
                        memory_column(progress.reference, shown),
                        interrupted, engines, _kv_pool(opts, progress),
                        sorted({name for snap in progress.snapshots for name in snap.metric_names}))
    _load_results(report, plan, progress, judged, step)
    if report.sweep is not None:
        _step_verdicts(report, progress, host, limit, family_of(engines))
    return report


def _step_verdicts(report, progress, host: float | None, limit: float | None, engine: str | None) -> None:
    """Each sweep step's own verdict, from its measured rounds alone: the top-level verdict reads one step only
    (the best), and a leak or drift at a heavier step must not hide behind it."""
    from gpustack_guard.core.soak.rounds import choose_memory_source
    from gpustack_guard.core.soak.verdict import classify

    steps = report.sweep["steps"]
    for number, step in enumerate(steps):
        rounds = [r for r in progress.rounds if not r.warmup and r.step == step["value"]]
        refs = [r for r in progress.reference if not r.warmup and r.step == step["value"]]
        last = number == len(steps) - 1  # a dead endpoint ends the sweep: it went down in the last step listed
        verdict = classify(rounds, choose_memory_source(rounds), refs or None, host_memory_bytes=host,
                           memory_limit_bytes=limit, down_at_s=progress.down_at_s if last else None, engine=engine)
        step["verdict"] = verdict.verdict
        reasons = verdict.evidence or verdict.warnings
        step["verdict_reason"] = reasons[0] if reasons else None


def _load_results(report, plan, progress, judged: list, step: float | None) -> None:
    """Goodput and whether the SLOs held (on the judged rounds), the sweep's steps, the stored-sample cap."""
    from gpustack_guard.adapters.soak.runner import decide_step
    from gpustack_guard.core.soak.load_model import describe_slos, step_outcome, sweep_best

    if plan.slos:
        outcome = decide_step(plan, step, progress.rounds) if step is not None else step_outcome(
            0.0, [r.slo_misses or [] for r in judged], sum(r.requests for r in judged),
            sum(r.errors for r in judged), sum(r.slo_met_requests or 0 for r in judged), plan.max_error_rate)
        requests = sum(r.requests for r in judged)
        report.goodput = outcome.goodput
        report.slo = {"targets": describe_slos(plan.slos), "met": outcome.met, "misses": outcome.reasons,
                      "met_requests": sum(r.slo_met_requests or 0 for r in judged), "requests": requests}
    if plan.sweep:
        ran = [o.value for o in progress.steps]
        not_run = [v for v in plan.sweep.values if v not in ran]
        report.sweep = {"dimension": plan.sweep.dimension, "best": sweep_best(progress.steps),
                        "steps": [{"value": o.value, "met": o.met, "goodput": o.goodput, "misses": o.reasons}
                                  for o in progress.steps],
                        "not_run": not_run,
                        "stopped_early": bool(not_run and progress.steps and not progress.steps[-1].met)}
    dropped = sum(r.samples_dropped_requests for r in progress.rounds)
    cut = sum(r.samples_cut_gaps for r in progress.rounds)
    budget = plan.sample_budget()
    report.samples = {"cap": plan.max_stored_samples, "per_round": budget, "truncated": bool(dropped or cut),
                      "dropped_requests": dropped, "cut_itl_gaps": cut}
    if dropped or cut:
        report.verdict.warnings.append(
            f"stored samples capped at {plan.max_stored_samples:,} values (GSG_SOAK_MAX_SAMPLES; {budget:,} a "
            f"round): {dropped:,} requests' samples and {cut:,} inter-token gaps not stored in the JSON; every "
            "percentile is still from all requests")
    capped = [r for r in progress.rounds + progress.reference if r.gap_cap_hit]
    if capped:
        shown = ", ".join(sorted({str(r.index + 1) for r in capped}, key=int))
        report.verdict.warnings.append(
            f"round(s) {shown} stopped starting requests at {plan.max_round_gaps:,} inter-token gaps held "
            "(GSG_SOAK_MAX_ROUND_GAPS, the memory a round may keep): their percentiles are exact over the requests "
            "they ran, in less than --round-seconds")


def _kv_pool(opts: SoakOptions, progress) -> dict | None:
    from gpustack_guard.core.soak.metrics import observed_kv_pool

    return observed_kv_pool(progress.snapshots, _observed_file(opts.observed_file) if opts.observed_file else None)


@functools.lru_cache(maxsize=4)
def _observed_file(path: str):
    """--observed read once per run, not after every round: the report is rebuilt each round, and a file that
    changes or goes away during a soak of hours must not stop it."""
    from gpustack_guard.adapters.files.vectors import load_observed_kv

    return load_observed_kv(path)


SOAK_HEAD_BYTES = 4096  # of an existing soak.json or report.html: each names gsg soak in its opening
# what write_files puts in the folder, and how each opens (json_head and "command", the HTML's title)
SOAK_FILES = {"soak.json": r'\A\s*\Z|\A\{\s*"format_version":[^\n]*\n\s*"tool":\s*\{\s*"name":\s*"gsg"[^}]*\}'
                            r',\s*"command":\s*"soak"',
              "report.html": r"\A\s*\Z|<title>gsg soak: "}


def refuse_replacing_what_is_no_soak(out_dir: str) -> None:
    """--out may replace an earlier soak's soak.json and report.html (or empty files), never other files of those
    names: `--out docs` replaced the site's report.html, exit 0. Checked before the first request."""
    import re

    from gpustack_guard.adapters.files.output import refuse_replacing_unless

    for name, opening in SOAK_FILES.items():
        pattern = re.compile(opening)
        refuse_replacing_unless(Path(out_dir) / name, lambda head: pattern.search(head) is not None,  # noqa: B023 - called in this pass
                                f"the {name} of a gsg soak", "give --out another folder", max_bytes=SOAK_HEAD_BYTES,
                                head_only=True)


def write_files(out_dir: str, report) -> None:
    from gpustack_guard.adapters.files.output import known_secrets, write_atomic
    from gpustack_guard.core.secrets import scrub
    from gpustack_guard.reporters.soak import render_html, render_json

    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GsgError(exc.strerror or "cannot be created", where=out_dir) from None
    # what stdout and stderr get scrubbed of, the files are too: a server's error text kept in them may echo a key
    secrets = known_secrets()
    write_atomic(str(folder / "soak.json"), scrub(render_json(report), secrets))
    write_atomic(str(folder / "report.html"), scrub(render_html(report), secrets))


async def soak(opts: SoakOptions, progress=None, plan=None):
    """The soak itself, for callers that run their own event loop (tests run many at once)."""
    from gpustack_guard.adapters.files.output import err, out
    from gpustack_guard.adapters.soak.load import FATAL_REASONS
    from gpustack_guard.adapters.soak.runner import SoakProgress, run_soak
    from gpustack_guard.core.secrets import mask_url
    from gpustack_guard.core.soak.rounds import choose_memory_source, memory_column
    from gpustack_guard.reporters.soak import progress_line, round_load, table_header, table_row, tick_line

    if plan is None:
        _check(opts)
        plan = _plan(opts)
    progress = progress if progress is not None else SoakProgress()
    rows_to = out if opts.output == "text" else err
    rows_to(f"gsg soak {opts.model} at {mask_url(opts.url)}\n{table_header(bool(plan.reference))}\n")

    def on_start(index: int) -> None:
        err(progress_line(index, plan.total_rounds, opts.round_seconds, round_load(plan, index)) + "\n")

    def on_round(stats, reference) -> None:
        if stats.index == 0 and stats.requests and stats.errors == stats.requests:
            reason = next(iter(stats.error_reasons))
            if reason in FATAL_REASONS:
                raise GsgError(f"{reason} for every request of round 1 (check the URL, the key and --model)",
                               where=mask_url(plan.target.url))
        if reference is not None and reference.index == 0 and reference.requests \
                and reference.errors == reference.requests:
            reason = next(iter(reference.error_reasons))
            if reason in FATAL_REASONS:  # a control that never answered is no control: a verdict on it misleads
                raise GsgError(f"{reason} for every request of round 1 (check --reference-url, its key: "
                               "--reference-api-key-file or GSG_REFERENCE_API_KEY, and --reference-model)",
                               where=mask_url(plan.reference.url))
        # the memory column of this row: the best source of the rounds so far (the report, at the end, the verdict's)
        [row] = memory_column([stats], choose_memory_source(progress.rounds))
        rows_to(table_row(row, reference, bool(plan.reference)) + "\n")
        if opts.out_dir:
            write_files(opts.out_dir, build_report(opts, plan, progress))

    def on_tick(index: int, elapsed: float, results) -> None:
        err(tick_line(index, plan.total_rounds, elapsed, opts.round_seconds, len(results),
                      sum(1 for r in results if not r.ok)) + "\n")

    # a line every 10 s inside rounds long enough to leave the terminal silent otherwise
    await run_soak(plan, progress, on_round, on_start, on_tick if opts.round_seconds >= 20 else None)
    return plan, progress


async def _until_interrupted(work) -> None:
    """Run `work`; SIGINT and SIGTERM cancel it at its next await and end as KeyboardInterrupt. A signal handler
    that raised wherever the interpreter happened to be could land in a finalizer (the collection between rounds
    runs them): Python prints "Exception ignored" there and the soak ran on."""
    import signal

    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    caught: list[int] = []

    def stop(number: int) -> None:
        caught.append(number)
        if task is not None:
            task.cancel()

    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        for number in previous:
            loop.add_signal_handler(number, stop, number)
    except (NotImplementedError, RuntimeError, ValueError):  # no loop signal handling here: the raising handler
        previous = {}
    try:
        await work
    except asyncio.CancelledError:
        if not caught:
            raise
        raise KeyboardInterrupt from None
    finally:
        for number, handler in previous.items():
            loop.remove_signal_handler(number)
            signal.signal(number, handler)  # main()'s handlers again, for writing the report


def run(opts: SoakOptions) -> int:
    from gpustack_guard.adapters.files.output import interrupted as interrupted_line
    from gpustack_guard.adapters.files.output import out
    from gpustack_guard.adapters.soak.runner import SoakProgress
    from gpustack_guard.reporters.soak import render_json, verdict_text

    progress = SoakProgress()
    interrupted = False
    # main() turns the cyclic collector off for short runs; a soak runs for hours: collect, but leave the
    # objects of start-up (imports, typer) out of every full collection
    gc.collect()
    gc.freeze()
    gc.enable()
    _check(opts)
    plan = _plan(opts)
    plan.collect_between_rounds = True
    try:
        asyncio.run(_until_interrupted(soak(opts, progress, plan)))
    except KeyboardInterrupt:
        interrupted = True
    report = build_report(opts, plan, progress, interrupted)
    if opts.out_dir:
        write_files(opts.out_dir, report)
    if opts.output == "json":
        out(render_json(report))
    else:
        out(verdict_text(report))
    if interrupted:
        interrupted_line(f"gsg: interrupted after {len(progress.rounds)} of {plan.total_rounds} rounds"
            + (f"; written to {opts.out_dir}" if opts.out_dir else "") + "\n")
        return EXIT_INTERRUPTED
    if opts.fail_on == "degraded" and report.verdict.degraded:
        return EXIT_FAIL
    if opts.fail_on in ("failing", "slo") and report.verdict.verdict == "failing":
        return EXIT_FAIL
    if opts.fail_on == "slo" and report.slo is not None and not report.slo["met"]:
        return EXIT_FAIL
    return EXIT_OK

