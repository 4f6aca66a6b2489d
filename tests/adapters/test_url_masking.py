"""Issue 31: adapters show URLs only through core.secrets.mask_url (the GPUStack client, the hub's hints, soak's
chat URL), never with a password or a token."""

import httpx
import pytest
import respx

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient
from gpustack_guard.adapters.model_sources.hub_cache import HubCache
from gpustack_guard.adapters.model_sources.resolver import FactsResolver
from gpustack_guard.adapters.soak.load import chat_completions_url
from gpustack_guard.core.secrets import MASK
from gpustack_guard.core.spec.model import DeploymentSpec


def test_a_client_shows_its_base_url_through_mask_url():
    assert GPUStackClient("https://u:pw@h/p?token=t&x=1").base_url == f"https://h/p?token={MASK}&x=1"


@respx.mock
def test_a_client_error_names_the_server_without_its_password():
    respx.get("http://gpustack.test/version").mock(side_effect=httpx.ConnectError("refused"))
    client = GPUStackClient("http://admin:client-pw-4242@gpustack.test", "k", retries=0)
    with pytest.raises(ApiError) as caught:
        client.version()
    assert str(caught.value) == "GET /version: cannot connect to http://gpustack.test: refused"
    assert client.base_url == "http://gpustack.test"


@respx.mock
def test_the_hubs_licence_hint_shows_the_endpoint_masked(tmp_path):
    endpoint = "https://mirror-user:hub-pass-1234@hub.mirror.test"
    respx.get(url__regex=r"https://hub\.mirror\.test/acme/tiny-chat/resolve/main/config\.json").mock(
        return_value=httpx.Response(401))
    spec = DeploymentSpec.validate({"name": "m", "source": "huggingface", "huggingface_repo_id": "acme/tiny-chat"})
    _, error = FactsResolver(hub_cache=HubCache(tmp_path), endpoint=endpoint).resolve(spec, "a.yaml")
    assert error.endswith("accept the licence on https://hub.mirror.test/acme/tiny-chat"), error
    assert "hub-pass-1234" not in error and "mirror-user" not in error


def test_the_chat_url_keeps_a_gateway_token_query_at_the_end():
    assert chat_completions_url("http://h/?token=t") == "http://h/v1/chat/completions?token=t"
    assert chat_completions_url("http://h/v1/?token=t#f") == "http://h/v1/chat/completions?token=t#f"
    assert chat_completions_url("http://h/v1/chat/completions?k=1") == "http://h/v1/chat/completions?k=1"
    assert chat_completions_url("http://h:8000") == "http://h:8000/v1/chat/completions"
