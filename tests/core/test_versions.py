import json

import pytest

from gpustack_guard.core.versions import (
    MAX_VERSION_CHARS,
    Version,
    at_least,
    gpustack_dev_build,
    parse_version,
    version_lt,
)


@pytest.mark.parametrize("lower, higher", [
    ("0.11.0rc1", "0.11.0"),          # a release candidate comes before its release
    ("0.11.0.dev3", "0.11.0rc1"),
    ("0.11.0", "0.11.0.post1"),
    ("0.10.1", "0.10.1.1"),           # four-part releases keep their fourth part
    ("0.10.1.1", "0.10.2"),
    ("v0.9.2", "0.10.0"),             # numeric, not lexical; a leading v is allowed
    ("0.8.5+cu124", "0.8.6"),
    ("b5999", "b6000"),               # llama.cpp build tags
])
def test_pep440_order(lower, higher):
    assert version_lt(lower, higher) and not version_lt(higher, lower)


@pytest.mark.parametrize("text", [None, "", "latest", "main", "nightly", "3f9c2a1"])
def test_unknown_versions_compare_as_neither(text):
    assert parse_version(text) is None
    assert not version_lt(text, "0.11.0") and not at_least(text, "0.0.1")


def test_at_least_is_inclusive():
    assert at_least("v2.3.0", "2.3.0") and at_least("2.3.1", "2.3.0") and not at_least("2.3.0rc2", "2.3.0")


@pytest.mark.parametrize("text,parsed", [
    ("b\u0663", None),  # Arabic-Indic three: \d took it, Version() raised InvalidVersion (an internal error)
    ("\u0660.\u0661\u0667.\u0660", None),
    ("b\uff17\uff14\uff17\uff14", None),  # full-width 7474
    ("b7474", Version("7474")),
    ("b" + "9" * 5000, None),  # Version()'s int() raised ValueError past Python's 4,300 digits
    ("1." + "9" * 5000, None),
    ("b" + "9" * (MAX_VERSION_CHARS - 1), Version("9" * (MAX_VERSION_CHARS - 1))),
    ("b" + "9" * MAX_VERSION_CHARS, None),
    (" b10507 ", Version("10507")),
])
def test_odd_digits_and_huge_versions_are_unknown_never_an_error(text, parsed):
    assert parse_version(text) == parsed


@pytest.mark.parametrize("version", ["b\u0663", "b" + "9" * 5000, "1." + "9" * 5000, "\u0660.\u0661\u0667.\u0660"])
@pytest.mark.parametrize("backend", ["vLLM", "SGLang", "llama.cpp"])
def test_estimate_with_an_unreadable_version_runs_as_an_unknown_one(gsg, backend, version):
    result = gsg("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "24GiB", "--backend", backend,
                 "--backend-version", version, "-o", "json")
    assert result.code == 0 and "internal error" not in result.err, result.err
    assert json.loads(result.out)["verdict"]


def test_gpustack_dev_build_is_the_source_tree_placeholder_only():
    assert [gpustack_dev_build(v) for v in ("0.0.0", "v0.0.0", "0.0.0.dev0")] == [True, True, True]
    assert [gpustack_dev_build(v) for v in ("0.0", "0.0.1", "2.0.0", "latest", "", None)] == [False] * 6
