"""Hub lookups through the standard Hugging Face cache: its layout read and written as huggingface_hub does,
where it and the token are found, one check of `main` per run, offline use, and the error lines."""

import json
import os
import threading

import httpx
import pytest
import respx
from support.hub_cache import git_sha
from support.hub_cache import populate as populate_cache
from test_resolver import QWEN_05B, gguf_bytes

from gpustack_guard.adapters.files.output import err, known_secrets
from gpustack_guard.adapters.model_sources.hub import HubError
from gpustack_guard.adapters.model_sources.hub_cache import HubCache, hub_cache_root
from gpustack_guard.adapters.model_sources.hub_token import HubToken, hub_token, token_path
from gpustack_guard.adapters.model_sources.resolver import FactsResolver
from gpustack_guard.core.spec.model import DeploymentSpec

HUB = "https://hf.test"
REPO = "acme/tiny-chat"
OLD, NEW = "a" * 40, "b" * 40
CONFIG = json.dumps(QWEN_05B).encode()
INDEX = json.dumps({"metadata": {"total_size": 988_097_536}}).encode()
TOKEN = "hf_secretTokenValue123"


def answer(commit: str, content: bytes = b"", status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, content=content,
                          headers={"X-Repo-Commit": commit, "ETag": f'"{git_sha(content)}"', **headers})


def resolve_url(filename: str, revision: str = "main", repo: str = REPO) -> str:
    return f"{HUB}/{repo}/resolve/{revision}/{filename}"


def populate(root, files: dict[str, bytes], commit: str = OLD, repo: str = REPO, ref: str | None = "main"):
    return populate_cache(root, repo, commit, files, ref)


def resolver(root, **options) -> FactsResolver:
    return FactsResolver(hub_cache=HubCache(root), endpoint=HUB, **options)


def spec(**extra) -> DeploymentSpec:
    return DeploymentSpec.validate({"name": "m", "source": "huggingface", "huggingface_repo_id": REPO, **extra})


# --- reading a cache another tool filled ----------------------------------------------------------------------

@respx.mock  # no routes: any request would fail the test
def test_a_cache_filled_by_huggingface_cli_serves_offline_without_network(tmp_path):
    populate(tmp_path, {"config.json": CONFIG, "model.safetensors.index.json": INDEX})
    facts, error = resolver(tmp_path, offline=True).resolve(spec(), "a.yaml")
    assert error is None and facts.source == f"hub:{REPO}"
    assert (facts.num_hidden_layers, facts.weight_bytes) == (24, 988_097_536)
    assert respx.calls.call_count == 0


@respx.mock
def test_a_cached_gguf_is_read_from_the_cache(tmp_path):
    populate(tmp_path, {"tiny-Q4_K_M.gguf": gguf_bytes()}, repo="acme/tiny-gguf")
    s = spec(huggingface_repo_id="acme/tiny-gguf", huggingface_filename="tiny-Q4_K_M.gguf")
    facts, error = resolver(tmp_path, offline=True).resolve(s, "a.yaml")
    assert error is None and facts.num_hidden_layers == 2 and respx.calls.call_count == 0


def test_a_file_known_missing_leaves_the_catalog_to_answer(tmp_path):
    base = populate(tmp_path, {"README.md": b"hello"}, repo="meta-llama/Llama-3.1-8B")
    (base / ".no_exist" / OLD).mkdir(parents=True)
    (base / ".no_exist" / OLD / "config.json").touch()
    facts, error = resolver(tmp_path, offline=True).resolve(spec(huggingface_repo_id="meta-llama/Llama-3.1-8B"),
                                                            "a.yaml")
    assert error is None and facts.source == "catalog:meta-llama/Llama-3.1-8B"


# --- writing the layout ------------------------------------------------------------------------------------------

@respx.mock
def test_fetched_files_are_written_in_huggingface_hubs_layout(tmp_path):
    config = respx.get(resolve_url("config.json")).mock(return_value=answer(OLD, CONFIG))
    index = respx.get(resolve_url("model.safetensors.index.json", OLD)).mock(
        return_value=answer(OLD, status=404, **{"X-Error-Code": "EntryNotFound"}))
    facts, error = resolver(tmp_path).resolve(spec(), "a.yaml")
    assert error is None and facts.weight_bytes is None and (config.call_count, index.call_count) == (1, 1)
    base = tmp_path / "models--acme--tiny-chat"
    assert (base / "refs" / "main").read_text() == OLD
    pointer = base / "snapshots" / OLD / "config.json"
    assert pointer.is_symlink() and os.readlink(pointer) == f"../../blobs/{git_sha(CONFIG)}"
    assert (base / "blobs" / git_sha(CONFIG)).read_bytes() == CONFIG
    no_exist = base / ".no_exist" / OLD / "model.safetensors.index.json"
    assert no_exist.is_file() and no_exist.stat().st_size == 0
    assert sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file() or p.is_symlink()) == [
        f".no_exist/{OLD}/model.safetensors.index.json", f"blobs/{git_sha(CONFIG)}", "refs/main",
        f"snapshots/{OLD}/config.json"]  # no temporary file left behind
    again, _ = resolver(tmp_path, offline=True).resolve(spec(), "a.yaml")  # a later offline run uses it
    assert again.num_hidden_layers == 24 and respx.calls.call_count == 2


@respx.mock
def test_an_lfs_blob_is_named_by_its_linked_etag(tmp_path):
    sha256 = "e" * 64
    respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(
        302, headers={"X-Repo-Commit": OLD, "X-Linked-Etag": f'"{sha256}"', "ETag": '"other"',
                      "Location": "https://cdn.test/blob?signature=x"}))
    respx.get("https://cdn.test/blob?signature=x").mock(return_value=httpx.Response(200, content=CONFIG,
                                                                                    headers={"ETag": '"cdn"'}))
    assert resolver(tmp_path).hub.text(REPO, "config.json") == CONFIG.decode()
    pointer = tmp_path / "models--acme--tiny-chat" / "snapshots" / OLD / "config.json"
    assert os.readlink(pointer) == f"../../blobs/{sha256}"


@respx.mock
def test_where_symlinks_fail_the_snapshot_holds_a_copy(tmp_path, monkeypatch):
    def no_symlinks(*args, **kwargs):
        raise OSError("symbolic links are not supported here")

    monkeypatch.setattr(os, "symlink", no_symlinks)
    respx.get(resolve_url("config.json")).mock(return_value=answer(OLD, CONFIG))
    resolver(tmp_path).hub.text(REPO, "config.json")
    pointer = tmp_path / "models--acme--tiny-chat" / "snapshots" / OLD / "config.json"
    assert not pointer.is_symlink() and pointer.read_bytes() == CONFIG


def test_concurrent_writers_leave_one_whole_entry(tmp_path):
    cache = HubCache(tmp_path)
    blob = git_sha(CONFIG)
    errors = []

    def write():
        try:
            for _ in range(40):
                cache.store(REPO, OLD, "config.json", blob, CONFIG)
                cache.write_ref(REPO, "main", OLD)
        except Exception as exc:  # noqa: BLE001 - any failure in a writer fails the test below
            errors.append(exc)

    threads = [threading.Thread(target=write) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    base = cache.repo_dir(REPO)
    assert errors == [] and (base / "snapshots" / OLD / "config.json").read_bytes() == CONFIG
    assert (base / "refs" / "main").read_text() == OLD
    assert [p.name for p in base.rglob("*.tmp")] == []


def test_names_that_climb_out_of_the_cache_are_refused(tmp_path):
    hub = resolver(tmp_path).hub
    with pytest.raises(ValueError, match="'../../etc' is not a hub repo id"):
        hub.text("../../etc", "config.json")
    with pytest.raises(ValueError, match="'../secret' is not a file name inside hub repo acme/tiny-chat"):
        hub.text(REPO, "../secret")
    assert not list(tmp_path.iterdir())


# --- where the cache and the token are --------------------------------------------------------------------------

def test_cache_root_precedence():
    assert hub_cache_root({"HF_HUB_CACHE": "/c", "HUGGINGFACE_HUB_CACHE": "/l", "HF_HOME": "/h"}).as_posix() == "/c"
    assert hub_cache_root({"HUGGINGFACE_HUB_CACHE": "/l", "HF_HOME": "/h"}).as_posix() == "/l"
    assert hub_cache_root({"HF_HOME": "/h", "XDG_CACHE_HOME": "/x"}).as_posix() == "/h/hub"
    assert hub_cache_root({"XDG_CACHE_HOME": "/x"}).as_posix() == "/x/huggingface/hub"
    assert hub_cache_root({}) == hub_cache_root({"XDG_CACHE_HOME": ""})
    assert str(hub_cache_root({})) == os.path.expanduser("~/.cache/huggingface/hub")
    assert HubCache.from_environ({"HF_HUB_DISABLE_SYMLINKS": "1"}).symlinks is False


def test_token_precedence(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "token").write_text("hf_fromHomeFile\n")
    (tmp_path / "elsewhere").write_text("  hf_fromTokenPath\r\n")
    home = {"HF_HOME": str(tmp_path / "home")}
    assert token_path(home) == tmp_path / "home" / "token"
    assert hub_token(home) == HubToken("hf_fromHomeFile", from_file=True)
    assert hub_token({**home, "HF_TOKEN_PATH": str(tmp_path / "elsewhere")}).value == "hf_fromTokenPath"
    assert hub_token({**home, "HF_TOKEN_PATH": str(tmp_path / "elsewhere"), "HF_TOKEN": "hf_fromEnv"}) == HubToken(
        "hf_fromEnv", from_file=False)
    assert hub_token({**home, "HF_TOKEN": ""}).value == "hf_fromHomeFile"  # empty is unset, as huggingface_hub has it
    assert hub_token({"HF_TOKEN_PATH": str(tmp_path / "absent")}) is None
    assert "hf_" not in repr(hub_token(home))


def test_cli_uses_hf_home_and_masks_a_token_read_from_file(tmp_path, monkeypatch, capsys):
    import gpustack_guard.wiring as wiring

    (tmp_path / "hf-home").mkdir(exist_ok=True)
    (tmp_path / "hf-home" / "token").write_text(TOKEN + "\n")
    built = wiring.build_resolver(offline=False)
    assert built.hub.cache.root == tmp_path / "hf-home" / "hub" and built.hub._token == TOKEN
    err(f"a message that somehow holds {TOKEN}")
    assert capsys.readouterr().err == "a message that somehow holds ********\n"
    assert TOKEN in known_secrets(reveal=True)  # masked even with --show-secrets, like the API key


def test_a_token_from_the_environment_stays_under_the_env_rule(monkeypatch):
    import gpustack_guard.wiring as wiring

    monkeypatch.setenv("HF_TOKEN", "hf_envTokenForShowSecrets")
    assert wiring.build_resolver(offline=False).hub._token == "hf_envTokenForShowSecrets"
    assert "hf_envTokenForShowSecrets" in known_secrets() and "hf_envTokenForShowSecrets" not in known_secrets(
        reveal=True)  # render --show-secrets still shows the spec's ${HF_TOKEN}


def test_offline_switches_read_as_huggingface_hub_reads_them():
    from gpustack_guard.wiring import hub_offline

    assert [hub_offline(False, {"HF_HUB_OFFLINE": v}) for v in ("1", "true", "YES", "0", "false", "")] == [
        True, True, True, False, False, False]
    assert hub_offline(False, {"TRANSFORMERS_OFFLINE": "1"}) and hub_offline(True, {})


# --- the token goes to the hub host only -------------------------------------------------------------------------

@respx.mock
def test_token_goes_to_the_hub_and_not_to_its_cdn(tmp_path):
    hub = respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(
        302, headers={"X-Repo-Commit": OLD, "X-Linked-Etag": f'"{git_sha(CONFIG)}"',
                      "Location": "https://cdn.test/signed?sig=1"}))
    cdn = respx.get("https://cdn.test/signed?sig=1").mock(return_value=httpx.Response(200, content=CONFIG))
    assert resolver(tmp_path, hf_token=TOKEN).hub.text(REPO, "config.json") == CONFIG.decode()
    assert hub.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in cdn.calls[0].request.headers


@respx.mock
def test_token_follows_a_renamed_repos_redirect_on_the_hub_host(tmp_path):
    old = respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(
        307, headers={"Location": "/acme/renamed/resolve/main/config.json"}))
    new = respx.get(resolve_url("config.json", repo="acme/renamed")).mock(return_value=answer(OLD, CONFIG))
    resolver(tmp_path, hf_token=TOKEN).hub.text(REPO, "config.json")
    assert [r.calls[0].request.headers["Authorization"] for r in (old, new)] == [f"Bearer {TOKEN}"] * 2


@respx.mock
def test_a_redirect_whose_location_is_no_url_fails_the_lookup_without_quoting_it(tmp_path):
    """httpx quoted the part of the Location it could not read ("Invalid port: 'hunter2'": a password with an
    unencoded '#'); the lookup's failure names the redirect instead."""
    respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(
        302, headers={"Location": "https://bob:hunter2#x@cdn.test/signed"}))
    with pytest.raises(HubError) as exc:
        resolver(tmp_path, hf_token=TOKEN).hub.text(REPO, "config.json")
    assert str(exc.value) == (f"hub lookup of {REPO}/config.json failed: a redirect to a Location that is no URL "
                              "(not followed; its text not shown)")


# --- moving and pinned revisions ---------------------------------------------------------------------------------

@respx.mock
def test_a_cached_main_is_checked_once_per_run(tmp_path):
    populate(tmp_path, {"config.json": CONFIG, "model.safetensors.index.json": INDEX})
    head = respx.head(resolve_url("config.json")).mock(return_value=answer(OLD))
    run = resolver(tmp_path)
    first, _ = run.resolve(spec(), "a.yaml")
    second, _ = run.resolve(spec(name="other", guard={"model": {"max_position_embeddings": 8192}}), "b.yaml")
    assert first.weight_bytes == second.weight_bytes == 988_097_536
    assert head.call_count == 1 and respx.calls.call_count == 1  # one HEAD; the index came from the cache


@respx.mock
def test_an_uncached_main_is_fetched_once_per_run(tmp_path):
    get = respx.get(resolve_url("config.json")).mock(return_value=answer(OLD, CONFIG))
    hub = resolver(tmp_path).hub
    assert hub.text(REPO, "config.json") == hub.text(REPO, "config.json") == CONFIG.decode()
    assert get.call_count == 1 and respx.calls.call_count == 1


@respx.mock
def test_a_pinned_commit_is_never_checked(tmp_path):
    populate(tmp_path, {"config.json": CONFIG}, ref=None)
    hub = resolver(tmp_path).hub
    assert hub.text(REPO, "config.json", revision=OLD) == CONFIG.decode()
    assert hub.text(REPO, "config.json", revision=OLD) == CONFIG.decode()
    assert respx.calls.call_count == 0


@respx.mock
def test_a_new_commit_with_a_changed_file_is_fetched_by_commit(tmp_path):
    populate(tmp_path, {"config.json": CONFIG})
    changed = json.dumps({**QWEN_05B, "num_hidden_layers": 28}).encode()
    head = respx.head(resolve_url("config.json")).mock(return_value=answer(NEW, changed))
    get = respx.get(resolve_url("config.json", NEW)).mock(return_value=answer(NEW, changed))
    hub = resolver(tmp_path).hub
    assert json.loads(hub.text(REPO, "config.json"))["num_hidden_layers"] == 28
    assert json.loads(hub.text(REPO, "config.json"))["num_hidden_layers"] == 28
    assert (head.call_count, get.call_count, respx.calls.call_count) == (1, 1, 2)
    base = tmp_path / "models--acme--tiny-chat"
    assert (base / "refs" / "main").read_text() == NEW
    assert (base / "snapshots" / OLD / "config.json").read_bytes() == CONFIG  # the old snapshot stays whole


@respx.mock
def test_a_new_commit_with_the_same_file_reuses_the_blob(tmp_path):
    populate(tmp_path, {"config.json": CONFIG})
    respx.head(resolve_url("config.json")).mock(return_value=answer(NEW, CONFIG))
    assert resolver(tmp_path).hub.text(REPO, "config.json") == CONFIG.decode()
    pointer = tmp_path / "models--acme--tiny-chat" / "snapshots" / NEW / "config.json"
    assert os.readlink(pointer) == f"../../blobs/{git_sha(CONFIG)}" and respx.calls.call_count == 1


@respx.mock
def test_an_unreachable_hub_leaves_the_cached_copy_in_use(tmp_path):
    populate(tmp_path, {"config.json": CONFIG})
    head = respx.head(resolve_url("config.json")).mock(side_effect=httpx.ConnectError("no route to host"))
    hub = resolver(tmp_path).hub
    assert hub.text(REPO, "config.json") == hub.text(REPO, "config.json") == CONFIG.decode()
    assert head.call_count == 1


@respx.mock
def test_remote_gguf_header_reads_go_to_the_cdn_after_the_first(tmp_path):
    data = gguf_bytes()

    def cdn_range(request):
        assert "Authorization" not in request.headers
        start, end = map(int, request.headers["Range"].removeprefix("bytes=").split("-"))
        return httpx.Response(206, content=data[start:end + 1])

    hub = respx.get(resolve_url("tiny-Q4_K_M.gguf", repo="acme/tiny-gguf")).mock(return_value=httpx.Response(
        302, headers={"X-Repo-Commit": OLD, "Location": "https://cdn.test/gguf?sig=1"}))
    cdn = respx.get("https://cdn.test/gguf?sig=1").mock(side_effect=cdn_range)
    s = spec(huggingface_repo_id="acme/tiny-gguf", huggingface_filename="tiny-Q4_K_M.gguf")
    facts, error = resolver(tmp_path, hf_token=TOKEN).resolve(s, "a.yaml")
    assert error is None and facts.num_hidden_layers == 2
    assert hub.call_count == 1 and cdn.call_count >= 1
    assert (tmp_path / "models--acme--tiny-gguf" / "refs" / "main").read_text() == OLD


# --- offline ---------------------------------------------------------------------------------------------------

def test_offline_without_a_cached_ref_says_so(tmp_path):
    facts, error = resolver(tmp_path, offline=True).resolve(spec(), "a.yaml")
    assert facts is None and error == (
        f"model '{REPO}' is not in the built-in catalog, has no local config.json, and hub lookup is off "
        f"(--offline): the hub cache {tmp_path} has no {REPO}/config.json (no ref 'main' for the repo)")


def test_offline_gguf_miss_names_the_gguf(tmp_path):
    s = spec(huggingface_repo_id="acme/tiny-gguf", huggingface_filename="tiny-Q4_K_M.gguf")
    _, error = resolver(tmp_path, offline=True).resolve(s, "a.yaml")
    assert error.endswith(f"the hub cache {tmp_path} has no acme/tiny-gguf/tiny-Q4_K_M.gguf (no ref 'main' for the "
                          "repo)")


def test_offline_with_a_ref_but_not_the_file_names_the_commit(tmp_path):
    populate(tmp_path, {"README.md": b"hello"})
    hub = resolver(tmp_path, offline=True).hub
    with pytest.raises(ValueError) as caught:
        hub.text(REPO, "config.json")
    assert str(caught.value) == (f"offline: the hub cache {tmp_path} has no {REPO}/config.json at commit "
                                 f"{OLD[:12]} (revision 'main')")


# --- errors: one line naming the repo and file, never the token ----------------------------------------------------

@respx.mock
def test_gated_repo_asks_for_a_token_and_the_licence_without_echoing_it(tmp_path):
    respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(
        403, headers={"X-Error-Code": "GatedRepo"}))
    facts, error = resolver(tmp_path, hf_token=TOKEN).resolve(spec(), "a.yaml")
    assert facts is None and TOKEN not in error and "\n" not in error
    assert error == (f"hub refused {REPO}/config.json (HTTP 403, a gated repo): the token sent (HF_TOKEN or the "
                     f"token file) has no access: accept the licence on {HUB}/{REPO} with its account, or use a "
                     "token that has")


@respx.mock
def test_no_token_401_says_to_set_hf_token(tmp_path):
    respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(401))
    _, error = resolver(tmp_path).resolve(spec(), "a.yaml")
    assert error == (f"hub refused {REPO}/config.json (HTTP 401, gated or private, or no such repo): no token was "
                     f"sent: set HF_TOKEN (or run `huggingface-cli login`) and accept the licence on {HUB}/{REPO}")


@respx.mock
def test_not_found_and_timeout_lines(tmp_path):
    respx.get(resolve_url("config.json")).mock(return_value=httpx.Response(404, headers={"X-Error-Code":
                                                                                           "RepoNotFound"}))
    _, missing = resolver(tmp_path).resolve(spec(), "a.yaml")
    assert missing.endswith(f"the hub has no {REPO}/config.json at revision 'main' (HTTP 404)")
    assert not (tmp_path / "models--acme--tiny-chat" / ".no_exist").exists()  # a missing repo is not a missing file
    respx.get(resolve_url("x-Q4_K_M.gguf", repo="acme/other")).mock(return_value=httpx.Response(404))
    _, gguf = resolver(tmp_path).resolve(spec(huggingface_repo_id="acme/other", huggingface_filename="x-Q4_K_M.gguf"),
                                         "a.yaml")
    assert gguf == "hub has no acme/other/x-Q4_K_M.gguf at revision 'main' (HTTP 404)"
    respx.get(resolve_url("config.json", repo="acme/slow")).mock(side_effect=httpx.ReadTimeout("timed out"))
    _, slow = resolver(tmp_path, timeout=2.5).resolve(spec(huggingface_repo_id="acme/slow"), "a.yaml")
    assert slow == "hub lookup of acme/slow/config.json: no answer within 2.5 s"


@respx.mock
def test_a_hub_file_that_is_not_json_is_one_line(tmp_path):
    respx.get(resolve_url("config.json")).mock(return_value=answer(OLD, b"<html>login</html>"))
    _, error = resolver(tmp_path).resolve(spec(), "a.yaml")
    assert error == f"hub file {REPO}/config.json is not JSON: Expecting value (line 1)"
