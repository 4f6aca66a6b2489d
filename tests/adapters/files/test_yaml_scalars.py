"""Implicit tags through the memoised resolver and the constructor shortcuts (yaml_positions._TagMemoLoader,
_scalar) read every scalar as yaml.safe_load does: YAML 1.1's bools, base-8/16/2/60 ints, underscores,
.inf/.nan, timestamps, null, and the explicit tags gsg allows; as values, as keys, and mixed with quoted forms in one file."""

import math

import pytest
import yaml

from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError

SCALARS = [
    "yes", "No", "ON", "off", "y", "n", "true", "False", "TRUE", "~", "null", "Null", "NULL",
    "0o17", "017", "0x1F", "0b101", "0x_1F", "0b1_0", "08", "1_000", "1__0", "_1", "+12", "-0",
    "190:20:30", "1:00", "190:20:30.15", "1_000.5", "1e3", "1.0e+3", "6.8523015e+5", "685.230_15e+03",
    "1.", "0.", "._", "09.5", ".inf", "-.INF", "+.inf", ".NaN", ".nan",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-14T21:59:43Z",
    "'yes'", '"1_000"', "!!str 1", "!!int '7'", "!!float 3", "!!bool yes", "!!null ''",
    # the plain-decimal shortcut and its neighbours: zero, leading zeros (base 8), signs, non-ASCII digits
    "0", "7", "16", "00", "010", "0010", "09", "-16", "+0", "1" * 300, "!!int 16", "!!int 010", "!!float 16",
    "１６", "٣", "16 ", "1 6",
    "007", "+1", "-1", "0x1f", "0o7", "1:30", "١٢", "１２", "1e3", "1" * 1000, "9" * 1000,
]  # other tags (!!binary, !!set, custom ones) are refused: test_yaml_tags.py


def _same(got, expected) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    return type(got) is type(expected) and got == expected


@pytest.mark.parametrize("scalar", SCALARS)
def test_a_value_is_read_as_safe_load_reads_it(scalar):
    text = f"a: {scalar}\n"
    assert _same(load_documents(text)[0].data["a"], yaml.safe_load(text)["a"])


@pytest.mark.parametrize("scalar", [s for s in SCALARS if s not in (".NaN", ".nan")])  # nan != nan as a key
def test_a_key_is_read_as_safe_load_reads_it(scalar):
    text = f"{scalar}: 1\n"
    (got,), (expected,) = load_documents(text)[0].data, yaml.safe_load(text)
    assert _same(got, expected)


def test_an_empty_value_is_none():
    assert load_documents("a:\n")[0].data == yaml.safe_load("a:\n") == {"a": None}


def test_the_memo_keeps_plain_and_quoted_apart_in_one_file():
    text = "a: yes\nb: 'yes'\nc: yes\nd: 1_000\ne: '1_000'\nf: ~\ng: '~'\n"
    got, expected = load_documents(text)[0].data, yaml.safe_load(text)
    assert got == expected and [type(v) for v in got.values()] == [type(v) for v in expected.values()]


@pytest.mark.parametrize("scalar", ["<<", "="])  # a merge or value key used as a value: safe_load refuses it too
def test_a_merge_or_value_tag_as_a_value_is_an_error_as_in_safe_load(scalar):
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.safe_load(f"a: {scalar}\n")
    with pytest.raises(YamlSyntaxError):
        load_documents(f"a: {scalar}\n")


def test_the_resolver_no_ops_hold_only_because_no_path_resolver_is_registered():
    from gpustack_guard.adapters.files import yaml_positions
    yaml_positions._pyyaml()  # PyYAML and the loaders are made on first use
    assert yaml_positions._Loader.yaml_path_resolvers == {} and yaml.resolver.Resolver.yaml_path_resolvers == {}


def test_a_plain_decimal_is_an_int_of_its_digits_and_a_leading_zero_is_base_8():
    data = load_documents("a: 16\nb: 0\nc: 010\nd: '16'\ne: 18446744073709551616\n")[0].data
    assert data == {"a": 16, "b": 0, "c": 8, "d": "16", "e": 2 ** 64}
    assert [type(v) for v in data.values()] == [int, int, int, str, int]


@pytest.mark.parametrize("digits", [4300, 4301, 5000])
def test_an_int_past_pythons_digit_limit_is_one_error_also_with_a_higher_number_cap(monkeypatch, digits):
    # the shortcut for plain decimals fails as the constructor does: a YamlSyntaxError naming the line, never
    # int()'s ValueError (MAX_NUMBER_CHARS keeps such ints out by default)
    from gpustack_guard.adapters.files import yaml_positions

    monkeypatch.setattr(yaml_positions, "MAX_NUMBER_CHARS", 10_000)
    text = "a: 1\nb: " + "7" * digits + "\n"
    if digits <= 4300:
        assert load_documents(text)[0].data["b"] == int("7" * digits)
        return
    with pytest.raises(YamlSyntaxError) as caught:
        load_documents(text)
    # the reason is Python's own words, which differ by release ("limit (4300)" on 3.10, "(4300 digits)" later)
    said = str(caught.value)
    assert said.startswith(f"invalid int '{'7' * 40}...': Exceeds the limit (4300") and \
        said.endswith(f"for integer string conversion: value has {digits} digits")
    assert caught.value.line == 2
