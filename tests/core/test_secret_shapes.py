"""Issue 31, secrets: one URL masking function (mask_url), URLs refused before use (url_problem), and secrets
masked in every shape an echo gives them (scrub)."""

import base64
import html
import json
from urllib.parse import quote, quote_plus

import pytest

from gpustack_guard.core.secrets import (
    MASK,
    PREFIX_CHARS,
    is_secret_parameter,
    is_secret_value,
    mask_url,
    scrub,
    url_secrets,
)
from gpustack_guard.core.urls import MAX_URL_CHARS, SHOWN_URL_CHARS, bad_url, url_problem

# ---------------------------------------------------------------- mask_url


@pytest.mark.parametrize("url,shown", [
    # user info: dropped whole, whatever follows
    ("http://admin:pw-123@gpustack.test:8080/x?y=1", "http://gpustack.test:8080/x?y=1"),
    ("https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r", "https://github.com/o/r"),
    ("https://admin@[::1]:443/", "https://[::1]:443/"),
    ("admin:pw-123@gpustack.test", "gpustack.test"),  # no scheme
    ("http://admin:pw-123@gpustack.test:99999", "http://gpustack.test:99999"),  # a bad port
    ("http://a:b@c@gpustack.test/", "http://gpustack.test/"),  # '@' inside the password: the last one ends it
    ("http://a:p%40ss@gpustack.test/", "http://gpustack.test/"),
    ("http://gpustack.test/a@b", "http://gpustack.test/a@b"),  # an '@' in the path is not user info
    # token-like query values, names matched whatever their case and separators
    ("https://h/v1?token=abc&model=q", f"https://h/v1?token={MASK}&model=q"),
    ("https://h/?Access_Token=a&API-KEY=b&apikey=c&key=d&Secret=e&password=f&auth=g&x=1",
     f"https://h/?Access_Token={MASK}&API-KEY={MASK}&apikey={MASK}&key={MASK}&Secret={MASK}&password={MASK}"
     f"&auth={MASK}&x=1"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AK%2F1&X-Amz-Signature=ff&partNumber=1",
     f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm={MASK}&X-Amz-Credential={MASK}&X-Amz-Signature={MASK}"
     "&partNumber=1"),
    ("https://a.blob.core.windows.net/c?sv=2021&sig=abc%3D&se=2030", f"https://a.blob.core.windows.net/c?sv=2021&sig={MASK}&se=2030"),
    ("https://storage.googleapis.com/b/o?X-Goog-Signature=12&alt=media", f"https://storage.googleapis.com/b/o?X-Goog-Signature={MASK}&alt=media"),
    ("https://h/cb?code=xyz&state=ok;sessionId=1", f"https://h/cb?code={MASK}&state=ok;sessionId={MASK}"),
    ("https://h/?hf_token=x&private_token=y&jwt=z&pwd=w", f"https://h/?hf_token={MASK}&private_token={MASK}&jwt={MASK}&pwd={MASK}"),
    # a value shaped like a token under any name, or alone
    ("https://h/?q=hf_abcdefghijklmnop", f"https://h/?q={MASK}"),
    ("https://h/?sk-abcdefghijkl", f"https://h/?{MASK}"),
    # the fragment (OAuth implicit flow) and a path segment that is a token
    ("https://h/cb#access_token=abc&state=1", f"https://h/cb#access_token={MASK}&state=1"),
    ("https://h/bot/hf_abcdefghijklmnop/send", f"https://h/bot/{MASK}/send"),
    # nothing to hide: unchanged, including an empty token and near-miss names
    ("https://h/?token=", "https://h/?token="),
    ("https://huggingface.co/Qwen/Qwen3-8B?revision=main&max_tokens=5&monkeys=3",
     "https://huggingface.co/Qwen/Qwen3-8B?revision=main&max_tokens=5&monkeys=3"),
    ("http://[::1]:8080/metrics", "http://[::1]:8080/metrics"),
    ("", ""),
])
def test_mask_url(url, shown):
    assert mask_url(url) == shown


@pytest.mark.parametrize("url", ["http://u:pw@[::1/x?token=t", "http://u:pw@h:port:99/?token=t", "http://u:pw@h\x00/?token=t",
                                 "://u:pw@/?token=t", "u:pw@?token=t"])
def test_mask_url_never_raises_on_malformed_urls_and_still_hides_everything(url):
    shown = mask_url(url)
    assert "pw" not in shown and "token=t" not in shown and f"token={MASK}" in shown


@pytest.mark.parametrize("name", ["token", "TOKEN", "access_token", "accessToken", "api_key", "ApiKey", "key", "sig",
                                  "Signature", "secret", "client_secret", "password", "passwd", "pwd", "auth",
                                  "X-Amz-Date", "x-amz-security-token", "X-Goog-Credential", "session", "code",
                                  "refresh_token", "id_token"])
def test_secret_parameters(name):
    assert is_secret_parameter(name)


@pytest.mark.parametrize("name", ["model", "max_tokens", "revision", "page", "perPage", "alt", "state", "format",
                                  "tokenizer", "", "keyboard"])
def test_ordinary_parameters(name):
    assert not is_secret_parameter(name)


def test_a_url_with_a_token_in_its_query_is_a_secret_value_and_a_plain_one_is_not():
    assert is_secret_value("https://hooks.example/x?token=abc") and is_secret_value("https://h/?sig=1")
    assert not is_secret_value("https://hooks.example/x?page=2") and not is_secret_value("postgres://app@db/app")


def test_url_secrets_are_what_mask_url_hides_for_scrubbing_echoes():
    assert url_secrets("http://admin:p%40ss-word@h/?token=t0k%2Fen&x=1#sig=s1") == \
        ["p@ss-word", "p%40ss-word", "t0k%2Fen", "t0k/en", "s1"]
    # a user name beside a password is a name; alone and long, it is the credential
    assert url_secrets("https://ghp_abcdefghijklmnopqrstuv@github.com/") == ["ghp_abcdefghijklmnopqrstuv"]
    assert url_secrets("https://admin@h/") == [] and url_secrets(None) == [] and url_secrets("http://h/") == []
    assert url_secrets("https://h/hf_abcdefghijkl/x?sk-abcdefghijkl") == ["hf_abcdefghijkl", "sk-abcdefghijkl"]


# ---------------------------------------------------------------- url_problem


@pytest.mark.parametrize("url,problem", [
    ("", "is empty"),
    ("gpustack.test", "has no scheme: write http://HOST[:PORT] or https://HOST[:PORT]"),
    ("http:/gpustack.test", "has no scheme: write http://HOST[:PORT] or https://HOST[:PORT]"),
    ("ftp://gpustack.test", "has the scheme 'ftp': gsg speaks http:// and https:// only"),
    ("file:///etc/passwd", "has the scheme 'file': gsg speaks http:// and https:// only"),
    ("http://", "has no host"),
    ("http://:8080/", "has no host"),
    ("http://user:pw@/x", "has no host"),
    ("http://h:0", "has the port '0': a port is a number from 1 to 65535"),
    ("http://h:65536", "has the port '65536': a port is a number from 1 to 65535"),
    ("http://h:99999999999999999999999", "has the port '99999999999999999999': a port is a number from 1 to 65535"),
    ("http://h:http", "has the port 'http': a port is a number from 1 to 65535"),
    ("http://h:-1", "has the port '-1': a port is a number from 1 to 65535"),
    ("http://h:\uff18\uff10", "has the port '\uff18\uff10': a port is a number from 1 to 65535"),  # fullwidth digits
    ("http://gpu stack.test", "has a space or a control character (percent-encode it, %20)"),
    ("http://h/x\ty", "has a space or a control character (percent-encode it, %20)"),
    ("http://h/\x1b[2J", "has a space or a control character (percent-encode it, %20)"),
    ("http://h/\x85", "has a space or a control character (percent-encode it, %20)"),
    (" http://h", "has a space or a control character (percent-encode it, %20)"),
    ("http://[::1", "has an IPv6 host that is not valid (write it in brackets: http://[::1]:8080)"),
    ("http://[::1]x:80", "has an IPv6 host that is not valid (write it in brackets: http://[::1]:8080)"),
    ("http://[gg::1]/", "has an IPv6 host that is not valid (write it in brackets: http://[::1]:8080)"),
    ("http://a<b>/", "has a host name with characters a host name cannot have"),
    ("http://h" + "x" * MAX_URL_CHARS, f"is longer than {MAX_URL_CHARS:,} characters"),
])
def test_bad_urls(url, problem):
    assert url_problem(url) == problem


@pytest.mark.parametrize("url", ["http://gpustack.test", "HTTPS://GPUStack.Example:443/v1?token=x#f",
                                 "http://u:p@h:1/", "http://h:65535", "http://[::1]:8080/metrics",
                                 "http://[fe80::1%25eth0]/", "http://b\u00fccher.example/", "http://h_1.local:",
                                 "http://10.0.0.1/v1-openai"])
def test_good_urls(url):
    assert url_problem(url) is None


def test_a_refused_url_is_shown_masked_escaped_and_short():
    assert bad_url("http://admin:pw@h:0/?token=t") == \
        f"'http://h:0/?token={MASK}' has the port '0': a port is a number from 1 to 65535"
    assert bad_url("http://h/\x1b[2J") == \
        "'http://h/\\x1b[2J' has a space or a control character (percent-encode it, %20)"
    long = bad_url("ftp://" + "a" * 500)
    assert long == f"'ftp://{'a' * (SHOWN_URL_CHARS - 6)}...' has the scheme 'ftp': gsg speaks http:// and https:// only"
    assert bad_url("http://h") is None


# ---------------------------------------------------------------- scrub: one test per shape of an echo

KEY = "gsg_0123456789abcdef_0123456789abcdef0123456789abcdef"
PASSWORD = 'p@ss/w"rd \\ <&> caf\u00e9'  # every character some encoding changes


def test_as_written_and_as_a_bearer_header():
    assert scrub(f"Authorization: Bearer {KEY}", [KEY]) == f"Authorization: Bearer {MASK}"
    assert scrub(f"x{PASSWORD}y", [PASSWORD]) == f"x{MASK}y"


def test_json_escaped_once_twice_with_escaped_slashes_and_ascii_escapes():
    once = json.dumps(PASSWORD)[1:-1]
    assert once != PASSWORD and scrub(f'{{"message": "env {once}"}}', [PASSWORD]) == f'{{"message": "env {MASK}"}}'
    twice = json.dumps(json.dumps({"env": PASSWORD}))
    assert scrub(twice, [PASSWORD]) == f'"{{\\"env\\": \\"{MASK}\\"}}"'
    slashes = once.replace("/", "\\/")
    assert scrub(slashes, [PASSWORD]) == MASK
    unicode_kept = json.dumps(PASSWORD, ensure_ascii=False)[1:-1]
    assert scrub(unicode_kept, [PASSWORD]) == MASK


def encode_uri_component(value: str) -> str:
    return quote(value, safe="!'()*-._~")


@pytest.mark.parametrize("encode", [lambda v: quote(v, safe=""), quote, quote_plus, encode_uri_component,
                                    lambda v: quote(v, safe="").lower()])
def test_url_encoded_either_way_and_either_hex_case(encode):
    encoded = encode(PASSWORD)
    assert encoded != PASSWORD
    assert scrub(f"GET /x?password={encoded}&a=1", [PASSWORD]) == f"GET /x?password={MASK}&a=1"


def test_html_escaped():
    assert scrub(f"<p>{html.escape(PASSWORD)}</p>", [PASSWORD]) == f"<p>{MASK}</p>"


@pytest.mark.parametrize("user", ["", "a", "ab", "gsg", "admin-user"])  # each alignment of the secret in base64
def test_base64_of_basic_auth_whatever_the_user_name(user):
    encoded = base64.b64encode(f"{user}:{KEY}".encode()).decode()
    assert scrub(f"proxy saw Authorization: Basic {encoded} (rejected)", [KEY]) == \
        f"proxy saw Authorization: Basic {MASK} (rejected)"
    urlsafe = base64.urlsafe_b64encode(f"{user}:{PASSWORD}".encode()).decode()
    assert scrub(f"token={urlsafe}", [PASSWORD]) == f"token={MASK}"


@pytest.mark.parametrize("shown", [PREFIX_CHARS, PREFIX_CHARS + 1, 30, len(KEY) - 1])
def test_a_prefix_left_by_an_echo_cut_at_a_length_limit(shown):
    assert scrub(f"header was 'Bearer {KEY[:shown]}", [KEY]) == f"header was 'Bearer {MASK}"
    assert scrub(f"header was 'Bearer {KEY[:shown]}...' (truncated)", [KEY]) == \
        f"header was 'Bearer {MASK}...' (truncated)"


def test_a_cut_encoded_shape_is_masked_too():
    encoded = base64.b64encode(f"gsg:{KEY}".encode()).decode()
    assert scrub(f"Basic {encoded[:30]}", [KEY]) == f"Basic {MASK}"
    escaped = json.dumps(PASSWORD + PASSWORD)[1:-1]
    assert scrub(escaped[:PREFIX_CHARS + 3], [PASSWORD + PASSWORD]) == MASK


def test_what_is_not_masked():
    # fewer characters of a secret than an ordinary word shares with it: "gsg_01234567" is 12, this is 11
    assert scrub(f"gpustack {KEY[:PREFIX_CHARS - 1]}", [KEY]) == f"gpustack {KEY[:PREFIX_CHARS - 1]}"
    assert scrub("yes, it is on", ["on", "yes"]) == "yes, it is on"  # too short to mask anywhere
    assert scrub("nothing here", [KEY, PASSWORD]) == "nothing here" and scrub("", [KEY]) == ""


def test_overlapping_and_repeated_secrets_are_masked_once_each():
    assert scrub(f"{KEY}{KEY} and {KEY}", [KEY, KEY[:20]]) == f"{MASK} and {MASK}"
    assert scrub("abcdef-ghijkl", ["abcdef-g", "ef-ghijkl"]) == MASK


# ---------------------------------------------------------------- percent-encoding without urllib in core

@pytest.mark.parametrize("value", ["", "plain", "a b+c", "p@ss/w\"rd", "caf\u00e9 \u20ac \U0001f600", "100%", "%zz%4",
                                   "%C3%A9+%e2%82%ac", "%FF%FE", "~_.-!*'()"])
@pytest.mark.parametrize("safe", ["", "/", "/:@", "!'()*~"])
def test_percent_encoding_is_urllibs(value, safe):
    from urllib.parse import unquote_plus

    from gpustack_guard.core.secrets import percent_decoded, percent_encoded

    assert percent_encoded(value, safe) == quote(value, safe=safe)
    assert percent_encoded(value, " ").replace(" ", "+") == quote_plus(value)
    assert percent_decoded(value) == unquote_plus(value)
