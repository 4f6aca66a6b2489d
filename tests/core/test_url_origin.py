"""core.urls.origin: where a credential may go. One function for the hub's token and soak's reference key."""

from __future__ import annotations

import pytest

from gpustack_guard.core.urls import origin


@pytest.mark.parametrize("first, second", [
    ("https://huggingface.co", "https://HuggingFace.co:443/api/models/x?y=1"),  # case, default port, path, query
    ("http://vllm-a:80/v1", "http://user:pw@vllm-a/other"),                        # user info is no part of it
    ("http://[::1]:8000", "http://[::1]:8000/v1/chat/completions"),
])
def test_the_same_origin(first, second):
    assert origin(first) == origin(second)


@pytest.mark.parametrize("first, second", [
    ("http://gpustack:80", "https://gpustack:443"),        # another scheme
    ("http://gpustack:8000", "http://gpustack:8001"),       # another port
    ("https://huggingface.co", "https://cdn-lfs.huggingface.co"),  # a subdomain is another host
    ("http://vllm-a:8000", "http://vllm-b:8000"),
])
def test_another_origin(first, second):
    assert origin(first) != origin(second)


def test_an_origin_is_scheme_host_and_port():
    assert origin("HTTPS://Example.COM/x") == ("https", "example.com", "443")
    assert origin("http://10.0.0.5:9000/v1") == ("http", "10.0.0.5", "9000")
