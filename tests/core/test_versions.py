import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging import version as packaging_version

from gpustack_guard.core.versions import (
    MAX_VERSION_CHARS,
    InvalidVersion,
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


# gsg's Version is PEP 440's rule written out (core/versions.py); packaging, the reference implementation, is the
# oracle here only: the same versions parse, print in the same normal form and sort the same way.
_SPELLINGS = st.one_of(
    st.from_regex(r"\A(v|V)?([0-9]{1,3}!)?[0-9]{1,4}(\.[0-9]{1,4}){0,4}"
                  r"([-_.]?(a|b|c|rc|alpha|beta|pre|preview|RC|Alpha)[-_.]?[0-9]{0,3})?"
                  r"(-[0-9]{1,3}|[-_.]?(post|rev|r|POST)[-_.]?[0-9]{0,3})?"
                  r"([-_.]?(dev|DEV)[-_.]?[0-9]{0,3})?"
                  r"(\+[a-zA-Z0-9]{1,6}([-_.][a-zA-Z0-9]{1,6}){0,3})?\Z"),
    st.text(alphabet="0123456789.+-_!abcdeilmnoprstuvABCRV ", max_size=16),
)


@settings(max_examples=600, deadline=None)
@given(text=_SPELLINGS)
def test_parsing_and_normal_form_are_packagings(text):
    try:
        theirs = packaging_version.Version(text)
    except packaging_version.InvalidVersion:
        with pytest.raises(InvalidVersion):
            Version(text)
        return
    ours = Version(text)
    assert str(ours) == str(theirs)
    assert (ours.epoch, ours.release, ours.pre, ours.post, ours.dev, ours.local) == \
        (theirs.epoch, theirs.release, theirs.pre, theirs.post, theirs.dev, theirs.local)
    assert (ours.public, ours.base_version, ours.is_prerelease, ours.is_postrelease, ours.is_devrelease) == \
        (theirs.public, theirs.base_version, theirs.is_prerelease, theirs.is_postrelease, theirs.is_devrelease)
    assert (ours.major, ours.minor, ours.micro) == (theirs.major, theirs.minor, theirs.micro)


@settings(max_examples=600, deadline=None)
@given(left=_SPELLINGS, right=_SPELLINGS)
def test_order_and_equality_are_packagings(left, right):
    try:
        theirs = packaging_version.Version(left), packaging_version.Version(right)
    except packaging_version.InvalidVersion:
        return
    ours = Version(left), Version(right)
    assert [ours[0] < ours[1], ours[0] == ours[1], ours[0] > ours[1], ours[0] <= ours[1], ours[0] != ours[1]] == \
        [theirs[0] < theirs[1], theirs[0] == theirs[1], theirs[0] > theirs[1], theirs[0] <= theirs[1],
         theirs[0] != theirs[1]]
    if ours[0] == ours[1]:
        assert hash(ours[0]) == hash(ours[1])


# Neighbours the generator reaches rarely: each PEP 440 ordering rule once, in packaging's order.
_ORDERED = ["1.0.dev0", "1.0a0.dev1", "1.0a0", "1.0a1.post0.dev0", "1.0a1.post0", "1.0b0", "1.0rc0", "1.0",
            "1.0+abc", "1.0+abc.5", "1.0+0", "1.0+1.1", "1.0.post0.dev0", "1.0.post0", "1.0.1", "1!0.1"]


def test_every_ordering_rule_sorts_as_packaging_sorts():
    assert sorted(_ORDERED, key=Version) == sorted(_ORDERED, key=packaging_version.Version) == _ORDERED
    assert Version("1.0") == Version("1.0.0") == Version("1") and Version("0") == Version("0.0")
    assert str(Version(" V1.0-Alpha.2_POST-3.DEV4+Ubuntu-007 ")) == "1.0a2.post3.dev4+ubuntu.7"


@pytest.mark.parametrize("text", ["1.0+k\u212a", "1.0+\u0131x", "\u0661.0", "1.0-\uff11", "1.0 1", "1..0", "1.0+"])
def test_non_ascii_letters_and_digits_are_no_version(text):
    with pytest.raises(InvalidVersion):
        Version(text)
    assert parse_version(text) is None


def test_comparing_with_something_else_is_not_implemented():
    assert (Version("1.0") == "1.0") is False
    with pytest.raises(TypeError):
        assert Version("1.0") < "2.0"
