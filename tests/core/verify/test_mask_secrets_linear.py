"""mask_secrets and is_secret_value on long words: every name before a separator (URL scheme, argument name) is
bounded, so a line is read in time linear in its length. Unbounded, a 32 KiB argument dump of letters took about a
minute a line (64 such lines: a hang); the secrets around such runs are still masked."""

import time

import pytest

from gpustack_guard.core.secrets import MASK, URL_SCHEME_MAX_CHARS, is_secret_value
from gpustack_guard.core.verify import logparse as L

LINE = 32_768  # GSG_MAX_LOG_LINE_BYTES' default: the longest line verify reads whole


@pytest.mark.parametrize("unit", ["x", "aB", "A.", "a-", "x'", "a_", "hf_", "a1"])
def test_a_line_long_without_separators_is_read_in_linear_time(unit):
    text = (unit * (LINE // len(unit)))[:LINE]
    started = time.process_time()
    assert L.mask_secrets(text) == text
    is_secret_value(text)
    assert time.process_time() - started < 3.0  # quadratic: 16-60 s on this line


@pytest.mark.parametrize("text,shown", [
    ("a" * 200 + "_token=sk-abcdefghijklmnop x", "a" * 200 + "_token=" + MASK + " x"),
    ("'" + "k" * 300 + "_api_key': 'abcdefgh12345678'", "'" + "k" * 300 + "_api_key': '" + MASK + "'"),
    ("hf_token=hf_abcdefghijklmnopqrstuvwx", "hf_token=" + MASK),
    ("api_key=" + "z" * 40_000, "api_key=" + MASK),
    ("x" * 5_000 + " https://user:pw123456@host/p", "x" * 5_000 + " https://host/p"),  # mask_url drops user info
])
def test_secrets_next_to_long_names_are_still_masked(text, shown):
    found: set[str] = set()
    assert L.mask_secrets(text, found) == shown
    assert found and all(secret not in shown for secret in found)


@pytest.mark.parametrize("scheme_chars,masked", [(URL_SCHEME_MAX_CHARS, True), (URL_SCHEME_MAX_CHARS + 40, True)])
def test_a_url_password_behind_a_long_scheme_is_found(scheme_chars, masked):
    scheme = "s" * scheme_chars
    assert is_secret_value(f"{scheme}://user:pw123456@host") is masked
    assert "pw123456" not in L.mask_secrets(f"url={scheme}://user:pw123456@host")


def test_sixty_four_distinct_long_argument_dumps_stay_bounded():
    lines = []
    for i in range(70):  # past MAX_ARGUMENT_DUMPS (64): the rest are counted, not read
        lines.append(f"INFO 01-01 00:00:00 [utils.py:1] non-default args: {{'model': 'm', 'x{i}': '"
                     + "aB" * 16_000 + "'}\n")
    started = time.process_time()
    log, _ = L.parse_log(lines, "vllm")
    assert time.process_time() - started < 30  # was over two minutes
    assert log.args["model"] == "m"
