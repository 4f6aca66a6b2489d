"""The arguments GPUStack's worker adds to the backend command line (docs/gpustack-injected-arguments.md).

Pure: from the final flags, one replica's GPUs per worker and the spec's version/image/env to the arguments
GPUStack 2.3's `worker/backends/{vllm,sglang}.py` would append. A value the spec (or template) sets wins
wherever GPUStack checks for it; `--host/--port/--served-model-name` carry placeholders, their values are
only known on the worker.
"""

from __future__ import annotations

from functools import lru_cache, reduce
from math import gcd
from typing import TYPE_CHECKING, Mapping, Sequence

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.profiles import arithmetic_release, known_version
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    from gpustack_guard.core.render import RenderedSpec

WORKER_LABEL = "added by GPUStack's worker"
SKIP_VALUES = {"1", "true", "yes", "on"}  # GPUSTACK_SKIP_GPU_COUNT_CHECK (policies/utils.py)
CONTEXT_CAP = 8192  # both backends cap an unset length above this (_build_max_model_len_arguments)

_VLLM = "gpustack/worker/backends/vllm.py"
_SGLANG = "gpustack/worker/backends/sglang.py"
# any of these set (with a value) and GPUStack adds no parallel size (find_parameter in get_auto_parallelism_…)
USER_PARALLEL = {"vllm": ("tensor-parallel-size", "pipeline-parallel-size", "data-parallel-size"),
                 "sglang": ("tp-size", "pp-size", "dp-size")}
PARALLEL_FLAGS = {"vllm": ("tensor-parallel-size", "pipeline-parallel-size"), "sglang": ("tp-size", "pp-size")}


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Injected:
    """An argument GPUStack's worker adds to the command line, and why."""

    __repr__ = fields_repr

    key: str  # canonical flag name, as core.args spells it
    value: str | None
    why: str  # the condition under which GPUStack adds it
    source: str  # GPUStack file and function
    memory: bool = False  # gsg's arithmetic uses it (the effective parallel sizes)

    def render(self) -> str:
        return f"--{self.key}" if self.value is None else f"--{self.key}={self.value}"


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Injection:
    """What the worker adds for one replica, and why it would refuse to start (MP multi-node topology)."""

    __repr__ = fields_repr

    arguments: tuple[Injected, ...] = ()
    refusal: str | None = None

    def flags(self) -> dict[str, str | None]:
        return {a.key: a.value for a in self.arguments if a.memory}


def largest_power_of_two(n: int) -> int:
    return 0 if n < 1 else 1 << (n.bit_length() - 1)


def gpus_per_replica(listed: int, replicas: int, world_size: int, explicit: int | None, skip_check: bool) -> int:
    """GPUStack's gpu_selector.gpus_per_replica for manual gpu_ids (scheduler.set_model_gpus_per_replica):
    an explicit value; else the parallel world size; else the largest power of two <= gpu_ids / replicas."""
    if explicit:
        return explicit
    per_replica = listed // max(replicas, 1)
    if skip_check:
        return per_replica
    if world_size > 1:
        return world_size
    return largest_power_of_two(per_replica)


def worker_of(gpu_id: str) -> str:
    return gpu_id.split(":", 1)[0]


def assign_replicas(ids: Sequence[str], count: int, replicas: int) -> list[list[str]] | None:
    """The gpu_ids each replica gets, as GPUStack's manual selection takes them: `count` GPUs of one selected
    worker when one has that many left (the first in list order), else the workers with the most GPUs first
    (a distributed replica, leader first). None when the listed GPUs run out."""
    if replicas == 1 and 0 < count <= len(ids) and (len(ids) == 1 or _one_worker(ids)):
        # the usual spec (one replica on GPUs of one worker): its first `count` ids, as the loop below takes them;
        # grouping ids by worker per spec was ~2.5 us of 3.4 (10,000-spec scale tree, issue 34 tenth round)
        return [list(ids[:count])]
    return grouped_by_worker(ids, count, replicas)


def grouped_by_worker(ids: Sequence[str], count: int, replicas: int) -> list[list[str]] | None:
    """assign_replicas' general rule, for any number of replicas and workers (its shortcut is tested against it)."""
    left: dict[str, list[str]] = {}
    for gid in ids:
        left.setdefault(worker_of(gid), []).append(gid)
    chosen: list[list[str]] = []
    for _ in range(replicas):
        whole = next((w for w, g in left.items() if len(g) >= count), None)
        if whole is not None:
            taken, left[whole] = left[whole][:count], left[whole][count:]
        else:
            taken = []
            for worker in sorted(left, key=lambda w: -len(left[w])):
                need = count - len(taken)
                taken += left[worker][:need]
                left[worker] = left[worker][need:]
            if len(taken) < count:
                return None
        chosen.append(taken)
    return chosen


def _one_worker(ids: Sequence[str]) -> bool:
    first = worker_of(ids[0])
    return all(worker_of(gid) == first for gid in ids[1:])


def per_worker(ids: Sequence[str]) -> tuple[int, ...]:
    """GPUs per worker of one replica, the leader (most GPUs, GPUStack's main worker) first."""
    if len(ids) == 1:  # one GPU: one worker (most replicas of a large tree; issue 34 tenth round)
        return (1,)
    counts: dict[str, int] = {}
    for gid in ids:
        counts[worker_of(gid)] = counts.get(worker_of(gid), 0) + 1
    return tuple(sorted(counts.values(), reverse=True))


@lru_cache(maxsize=256)
def _at_least(version: str | None, family: str, floor: str) -> bool:
    # the release the arithmetic assumes: a moving tag (`latest`) is the default release, as everywhere else
    return arithmetic_release(family, version) >= known_version(floor)


def _int(flags: Mapping[str, str | None], key: str) -> int | None:
    value = flags.get(key)
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


def executor_backend(flags: Mapping[str, str | None], version: str | None, image_name: str | None) -> str:
    """ray | mp (utils/command.py resolve_executor_backend): the spec's choice; else Ray, except for a pinned
    image or a `-custom` vLLM version from 0.18.0 (Ray left vLLM's default dependencies)."""
    chosen = flags.get("distributed-executor-backend")
    if chosen is not None:
        return "mp" if chosen == "mp" else "ray"
    if image_name:
        return "mp"
    if version and "-custom" in version and _at_least(version.replace("-custom", ""), "vllm", "0.18.0"):
        return "mp"
    return "ray"


def _ray_layout(workers: tuple[int, ...]) -> tuple[int, int]:
    """base.py cal_distributed_parallelism_arguments: TP = the leader's GPUs, PP = workers; uneven -> PP only."""
    tp = workers[0]
    if any(n != tp for n in workers[1:]):
        return 1, sum(workers)
    return tp, len(workers)


def _mp_layout(workers: tuple[int, ...], flags) -> tuple[list[Injected], str | None]:
    """utils/vllm_topology.py validate_multinode_topology, from the leader's side."""
    tp_user, pp_user = _int(flags, "tensor-parallel-size"), _int(flags, "pipeline-parallel-size")
    dp_user, dpl_user = _int(flags, "data-parallel-size"), _int(flags, "data-parallel-size-local")
    pp = pp_user or 1
    total = sum(workers)
    if tp_user is not None:
        tp = tp_user
    elif dp_user:
        if total % (dp_user * pp):
            return [], (f"cannot infer --tensor-parallel-size from --data-parallel-size {dp_user} and "
                        f"--pipeline-parallel-size {pp}: {total} GPUs is not a multiple of {dp_user * pp}")
        tp = total // (dp_user * pp)
    else:
        tp = reduce(gcd, workers)
    span = tp * pp
    if span <= min(workers):
        dpl = [n // span for n in workers]
        shape, dp, local = "dp_only", sum(dpl), dpl[0]
    else:
        if len(set(workers)) != 1:
            return [], (f"cross-node TP/PP ({span} GPUs per rank) needs workers with equal GPU counts, "
                        f"got {list(workers)}")
        if span % workers[0] or len(workers) % (span // workers[0]):
            return [], f"{span} GPUs per rank cannot be spread evenly over {len(workers)} workers of {workers[0]}"
        dp, local = len(workers) // (span // workers[0]), 1
        shape = "mp_only" if dp == 1 else "nested"
    if dp_user is not None and dp_user != dp:
        return [], f"--data-parallel-size {dp_user} does not match the derived {dp}"
    why = f"{len(workers)} workers ({'+'.join(map(str, workers))} GPUs), MP multi-node, shape {shape}"
    where = f"{_VLLM} get_auto_parallelism_arguments (MP branch)"
    out = [] if tp_user is not None else [Injected("tensor-parallel-size", str(tp), why, where, memory=True)]
    if shape != "mp_only":
        if dp_user is None:
            out.append(Injected("data-parallel-size", str(dp), why, where, memory=True))
        if dpl_user is None:
            out.append(Injected("data-parallel-size-local", str(local), why, where, memory=True))
    return out, None


def _parallel(family: str, flags, workers: tuple[int, ...], executor: str) -> tuple[list[Injected], str | None]:
    tp_key, pp_key = PARALLEL_FLAGS[family]
    source = f"{_VLLM if family == 'vllm' else _SGLANG} get_auto_parallelism_arguments"
    if family == "vllm" and len(workers) > 1 and executor == "mp":
        return _mp_layout(workers, flags)
    if any(flags.get(k) is not None for k in USER_PARALLEL[family]):
        return [], None  # the spec's parallel sizes stand
    if len(workers) > 1:
        tp, pp = _ray_layout(workers)
        why = (f"{len(workers)} workers ({'+'.join(map(str, workers))} GPUs) and no parallel size: TP = the "
               "leader's GPUs, PP = workers" + ("; uneven GPU counts fall back to PP over every GPU"
                                               if tp == 1 else ""))
        return [Injected(tp_key, str(tp), why, source, memory=True),
                Injected(pp_key, str(pp), why, source, memory=True)], None
    if workers and workers[0] > 1:
        return [Injected(tp_key, str(workers[0]), f"{workers[0]} GPUs of one worker and no parallel size",
                         source, memory=True)], None
    return [], None


def injected_arguments(family: str, flags: Mapping[str, str | None], workers: tuple[int, ...], *, name: str,
                       version: str | None = None, image_name: str | None = None,
                       env: Mapping[str, str] | None = None, native_max_len: int | None = None,
                       fraction: float | None = None) -> Injection:
    """What GPUStack 2.3's worker appends for one replica. `workers`: its GPUs per worker, leader first (empty:
    placement unknown). `fraction`: the SGLang fraction GPUStack booked (injected as --mem-fraction-static)."""
    if family not in PARALLEL_FLAGS:
        return Injection()
    disabled = bool((env or {}).get("GPUSTACK_DISABLE_METRICS"))
    body = _injected(family, tuple(flags.items()), workers, version, image_name, disabled, native_max_len, fraction)
    tail = _host_and_port(family, "host" in flags, "port" in flags)
    if "served-model-name" not in flags:
        tail += (_always(family, "served-model-name", name),)
    return Injection(body.arguments + tail, body.refusal)


def _always(family: str, key: str, value: str) -> Injected:
    own = _VLLM if family == "vllm" else _SGLANG
    return Injected(key, value, "always, unless the spec sets it", f"{own} _build_command_args")


@lru_cache(maxsize=16)  # the same two placeholder records for every spec of a family (issue 34: ~1.3 us a spec)
def _host_and_port(family: str, host_set: bool, port_set: bool) -> tuple[Injected, ...]:
    return tuple(_always(family, key, value) for key, value, given in
                 (("host", "<worker ip>", host_set), ("port", "<assigned port>", port_set)) if not given)


@lru_cache(maxsize=4096)  # thousands of specs share a handful of flag sets and GPU layouts
def _injected(family: str, flag_items: tuple, workers: tuple[int, ...], version: str | None,
              image_name: str | None, metrics_disabled: bool, native_max_len: int | None,
              fraction: float | None) -> Injection:
    flags = dict(flag_items)
    executor = executor_backend(flags, version, image_name) if family == "vllm" else "ray"
    parallel, refusal = _parallel(family, flags, workers, executor)
    length_key = "max-model-len" if family == "vllm" else "context-length"
    length_source = f"{_VLLM} _build_max_model_len_arguments" if family == "vllm" else f"{_SGLANG} _build_command_args"
    rest = _vllm(flags, workers, version, executor) if family == "vllm" \
        else _sglang(flags, workers, version, metrics_disabled, fraction)
    # GPUStack's order: the length cap, the parallel sizes, the rest, then host/port/name after the spec's own
    return Injection(tuple(_length_cap(length_key, flags, native_max_len, length_source) + parallel + rest),
                     refusal)


def _length_cap(key: str, flags, native_max_len: int | None, source: str) -> list[Injected]:
    if key in flags or not native_max_len or native_max_len <= CONTEXT_CAP:
        return []
    return [Injected(key, str(CONTEXT_CAP), f"unset and the model's length {native_max_len:,} > {CONTEXT_CAP}",
                     source)]


def _vllm(flags, workers, version, executor) -> list[Injected]:
    out: list[Injected] = []
    if "disable-access-log-for-endpoints" not in flags and _at_least(version, "vllm", "0.16.0"):
        out.append(Injected("disable-access-log-for-endpoints", "/metrics", "vLLM >= 0.16.0",
                            f"{_VLLM} get_access_log_arguments"))
    if not {"enable-prompt-tokens-details", "no-enable-prompt-tokens-details"} & set(flags) \
            and _at_least(version, "vllm", "0.9.0.1"):
        out.append(Injected("enable-prompt-tokens-details", None, "vLLM >= 0.9.0.1",
                            f"{_VLLM} get_cache_report_arguments"))
    if len(workers) > 1:
        why = f"{len(workers)} workers ({executor} executor)"
        if executor == "ray":
            out.append(Injected("distributed-executor-backend", "ray", why,
                                f"{_VLLM} _build_ray_distributed_arguments"))
        elif "distributed-executor-backend" not in flags:
            out.append(Injected("distributed-executor-backend", "mp", why, f"{_VLLM} _build_mp_multinode_arguments"))
    return out


def _sglang(flags, workers, version, metrics_disabled, fraction) -> list[Injected]:
    out: list[Injected] = []
    if "enable-metrics" not in flags and not metrics_disabled:
        out.append(Injected("enable-metrics", None, "unless env GPUSTACK_DISABLE_METRICS is set",
                            f"{_SGLANG} get_metrics_arguments"))
    if "uvicorn-access-log-exclude-prefixes" not in flags and _at_least(version, "sglang", "0.5.8.post1"):
        out.append(Injected("uvicorn-access-log-exclude-prefixes", "/metrics", "SGLang >= 0.5.8.post1",
                            f"{_SGLANG} get_access_log_arguments"))
    if "enable-cache-report" not in flags and _at_least(version, "sglang", "0.3.4"):
        out.append(Injected("enable-cache-report", None, "SGLang >= 0.3.4", f"{_SGLANG} get_cache_report_arguments"))
    if len(workers) > 1:
        why = f"{len(workers)} workers (leader's view)"
        out += [Injected("nnodes", str(len(workers)), why, f"{_SGLANG} _get_multinode_arguments"),
                Injected("node-rank", "0", why, f"{_SGLANG} _get_multinode_arguments"),
                Injected("dist-init-addr", "<leader ip>:<port>", why, f"{_SGLANG} _get_multinode_arguments")]
    if fraction and "mem-fraction-static" not in flags:
        out.append(Injected("mem-fraction-static", f"{fraction:g}", "unset: the fraction GPUStack booked",
                            f"{_SGLANG} _build_command_args"))
    return out


def for_spec(rendered: RenderedSpec) -> Injection:
    """The worker's arguments for the first replica as the spec alone tells them (render has no fleet): manual
    gpu_ids give the GPUs per worker; automatic placement runs the spec's parallel size on one worker."""
    spec, facts = rendered.spec, rendered.facts
    tp, pp = rendered.parallel_size()
    selector = spec.gpu_selector
    ids = list(selector.gpu_ids or []) if selector is not None else []
    workers: tuple[int, ...] = (tp * pp,)
    if selector is not None and ids:
        skip = str(rendered.env.get("GPUSTACK_SKIP_GPU_COUNT_CHECK", "")).strip().lower() in SKIP_VALUES
        count = gpus_per_replica(len(ids), spec.replicas, tp * pp,
                                 selector.gpus_per_replica, skip)
        assigned = assign_replicas(ids, count, 1) if count else None
        workers = per_worker(assigned[0]) if assigned else ()
    return injected_arguments(rendered.family, rendered.flags, workers, name=spec.name,
                              version=spec.backend_version, image_name=spec.image_name, env=rendered.env,
                              native_max_len=facts.max_position_embeddings if facts else None)
