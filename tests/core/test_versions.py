import pytest

from gpustack_guard.core.versions import at_least, parse_version, version_lt


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
