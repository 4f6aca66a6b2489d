"""llama.cpp's default context when -c is not given, by build (profiles.LLAMACPP_DEFAULT_CTX_BY_BUILD), kept apart
from GPUStack's gguf-parser booking (profiles.GPUSTACK_BOOKING_CTX)."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

H100 = [(80 * GiB, "NVIDIA H100 80GB HBM3")]
# (model, layers x KV heads x head size x 2 (K and V) x 2 bytes (f16) per cell, n_ctx_train)
QWEN25_7B = ("Qwen/Qwen2.5-7B", 28 * 4 * 128 * 2 * 2, 32768)
LLAMA31_8B = ("meta-llama/Llama-3.1-8B-Instruct", 32 * 8 * 128 * 2 * 2, 131072)


def estimate(model: str, version: str, flags: dict | None = None, booking: bool = False):
    return engine.estimate("llamacpp", catalog_facts(model), H100, flags or {}, version, Policy(), booking=booking)


@pytest.mark.parametrize(("model", "cell_bytes", "trained"), [QWEN25_7B, LLAMA31_8B])
@pytest.mark.parametrize(("build", "rule", "default"), [
    ("b2000", "n-ctx-512", 512),        # common.h n_ctx = 512
    ("b3579", "n-ctx-train", 0),        # n_ctx = 0: the model's trained context
    ("b4020", "n-ctx-4096", 4096),      # PR #10136
    ("b7473", "n-ctx-4096", 4096),      # the last build before --fit
    ("b7474", "n-ctx-train-fit", 0),    # n_ctx = 0 again, with --fit
])
def test_an_unset_context_is_the_builds_default(model, cell_bytes, trained, build, rule, default):
    est = estimate(model, build)
    cells = default or trained
    context = est.extra["context"]
    assert (context["ctx_size"], context["source"], context["rule"]) == (cells, "engine-default", rule)
    assert est.kv_capacity_tokens == cells and est.kv_cache == cells * cell_bytes
    assert "fit" not in est.extra  # an 80 GiB card holds every one of them with the margin free
    assert any(note.startswith(f"no --ctx-size: llama.cpp {build} starts with") for note in est.notes)


def test_the_two_changes_to_0_give_the_trained_context_in_bytes():
    # Llama-3.1-8B: 131,072 cells x 32 layers x 8 KV heads x 128 x 2 x 2 B = 16 GiB; 4,096 cells = 512 MiB
    assert estimate(LLAMA31_8B[0], "b7474").kv_cache == 16 * GiB
    assert estimate(LLAMA31_8B[0], "b7473").kv_cache == 512 * 2**20
    # Qwen2.5-7B: 32,768 cells x 28 x 4 x 128 x 2 x 2 B = 1.75 GiB
    assert estimate(QWEN25_7B[0], "b3579").kv_cache == 1792 * 2**20


@pytest.mark.parametrize(("model", "cell_bytes", "trained"), [QWEN25_7B, LLAMA31_8B])
def test_split_streams_take_the_trained_context_each_under_fit(model, cell_bytes, trained):
    # -np 2 --no-kv-unified with n_ctx 0: --fit resolves the unset context to n_ctx_train per stream
    # (common/fit.cpp n_ctx_max = hp_nct x n_streams); without --fit llama_context splits n_ctx_train over them
    split = {"parallel": "2", "no-kv-unified": "true"}
    fitted = estimate(model, "b7474", split)
    assert fitted.kv_capacity_tokens == 2 * trained and fitted.kv_cache == 2 * trained * cell_bytes
    assert f"(2 streams of {trained:,})" in fitted.extra["context"]["why"]
    plain = estimate(model, "b7474", {**split, "fit": "off"})
    assert plain.kv_capacity_tokens == trained


def test_given_context_is_said_to_be_given():
    est = estimate(QWEN25_7B[0], "b7474", {"ctx-size": "8192"})
    assert est.extra["context"]["source"] == "given" and est.kv_capacity_tokens == 8192
    assert not any(note.startswith("no --ctx-size") for note in est.notes)
    # -c 0 is the trained context as given: not the build's default, and --fit leaves it
    zero = estimate(QWEN25_7B[0], "b7473", {"ctx-size": "0"})
    assert zero.extra["context"]["source"] == "given" and zero.kv_capacity_tokens == 32768


@pytest.mark.parametrize("build", ["b4020", "b7474"])
def test_gpustack_booking_keeps_gguf_parsers_context(build):
    # placement books what GPUStack's scheduler books: gguf-parser's 8,192 cells, whatever the build starts with
    est = estimate(LLAMA31_8B[0], build, booking=True)
    assert est.extra["context"]["source"] == "gpustack-booking" and est.kv_capacity_tokens == P.GPUSTACK_BOOKING_CTX
    assert est.kv_cache == 8192 * LLAMA31_8B[1] == 1 * GiB


def test_a_model_without_a_trained_length_is_counted_at_the_booking_with_a_note():
    from dataclasses import replace
    facts = replace(catalog_facts(QWEN25_7B[0]), max_position_embeddings=None)
    est = engine.estimate("llamacpp", facts, H100, {}, "b7474", Policy())
    assert est.kv_capacity_tokens == 8192 and "which gsg does not know here" in est.extra["context"]["why"]


def test_every_row_names_where_it_was_read():
    rows = P.LLAMACPP_DEFAULT_CTX_BY_BUILD
    assert [r.since for r in rows] == ["b0", "b3579", "b4020", "b7474"]
    assert [r.n_ctx for r in rows] == [512, 0, 4096, 0]
    assert all("common/common.h" in r.source for r in rows)
    assert rows[-1].since == P.LLAMACPP_FIT_SINCE  # --fit only shortens an unset context, which is 0 from then


@pytest.mark.parametrize("version", [None, "", "  ", "cuda", "cpu", "server-cuda", "latest"])
def test_no_build_number_is_the_newest_modelled_build_as_gpustacks_moving_image_tag_runs(version):
    # GPUStack 2.x's llama.cpp backend runs ghcr.io/ggml-org/llama.cpp:server-cuda and the like (version names cuda,
    # cpu, ...): whatever starts is the newest build, so an unnumbered spec is counted as b10507 and says so
    est = estimate(LLAMA31_8B[0], version)
    newest = estimate(LLAMA31_8B[0], "b10507")
    assert P.DEFAULT_VERSIONS["llamacpp"] == P.LLAMACPP_NEWEST_MODELLED == "b10507"
    assert (est.kv_capacity_tokens, est.kv_cache, est.requested) == (131072, 16 * GiB, newest.requested)
    assert est.extra["context"]["rule"] == "n-ctx-train-fit"
    named = f" (backend_version '{version}' names no build)" if version and version.strip() else ""
    assert est.notes[-1] == f"no build given: the newest modelled, b10507, as GPUStack's moving image tag runs{named}"
    assert not any(note.startswith("no build given") for note in newest.notes)


def _llamacpp_builds() -> list[str]:
    """Every build a llama.cpp row or switch of the arithmetic starts at."""
    from gpustack_guard.core import engine_flags as EF
    switches = [getattr(P, name) for name in dir(P) if name.startswith("LLAMACPP_") and name.endswith("_SINCE")]
    rows = P.LLAMACPP_DEFAULT_CTX_BY_BUILD + P.LLAMACPP_BATCH_DEFAULTS + P.LLAMACPP_FFN_FORMS
    terms = [row.since for rows_of_term in P.TERM_SOURCES["llamacpp"].values() for row in rows_of_term]
    return switches + [EF.LLAMACPP_AUTO_SINCE] + [row.since for row in rows] + terms


def test_the_newest_modelled_build_is_the_latest_any_llama_cpp_row_starts_at():
    builds = _llamacpp_builds()
    assert len(builds) > 20 and "b7474" in builds and "b10507" in builds  # the scan finds the tables
    assert max(builds, key=lambda b: int(b[1:])) == P.LLAMACPP_NEWEST_MODELLED


@pytest.mark.parametrize("build", ["b7474", "b10507", None])
@pytest.mark.parametrize(("model", "gpu"), [(LLAMA31_8B[0], 16 * GiB), (LLAMA31_8B[0], 12 * GiB),
                                            (QWEN25_7B[0], 9 * GiB)])
def test_gpustacks_booking_counts_the_arguments_as_given_without_fit(model, gpu, build):
    # gguf-parser books what the arguments ask for at 8,192 cells; llama.cpp's --fit runs later, in the engine, so
    # a card where 8,192 cells miss the --fit-target margin is still booked in full (no shorter context, no offload)
    card = [(gpu, "NVIDIA test")]
    booked = engine.estimate("llamacpp", catalog_facts(model), card, {}, build, Policy(), booking=True)
    as_given = engine.estimate("llamacpp", catalog_facts(model), card, {"fit": "off"}, build, Policy(), booking=True)
    started = engine.estimate("llamacpp", catalog_facts(model), card, {}, build, Policy())
    assert "fit" not in booked.extra and booked.extra["context"]["ctx_size"] == 8192
    assert (booked.requested, booked.kv_cache, booked.extra["offload_layers"]) == \
        (as_given.requested, as_given.kv_cache, as_given.extra["offload_layers"])
    assert started.extra["fit"]["action"] in ("context", "offload")  # the engine itself does move, on that card
    if model == LLAMA31_8B[0]:
        assert booked.kv_cache == 1 * GiB and booked.extra["offload_layers"] == 32  # every block on the GPU
