"""Files of Hugging Face hub repos, through the standard hub cache (hub_cache.py).

A moving revision (a branch or tag; `main` unless told) is asked of the hub at most once per run per
(repo, revision): the first lookup either fetches the file (the answer names the commit) or, when the cache
already holds it, sends one HEAD request and keeps the cached copy when the commit is unchanged (or when the
new commit's file has a blob already cached). Later lookups of that (repo, revision) in the run use the commit
learnt, from the cache, fetching only files it lacks, by commit. A pinned 40-hex commit is never checked.
Offline, the cache alone answers, and a miss says which ref or file is absent.

The token goes only to the hub's own host: the hub redirects large (LFS) files to a CDN with a signed URL,
and gsg follows redirects itself, so each hop is judged on its own (httpx would also drop Authorization on a
cross-origin redirect; this does not rely on it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable
from urllib.parse import quote, urljoin

from gpustack_guard.adapters.files.regular_file import MAX_INDEX_BYTES, read_text_file
from gpustack_guard.adapters.model_sources.hub_cache import (
    MISSING,
    HubCache,
    KnownMissing,
    blob_name,
    check_repo_file,
    etag_name,
    is_commit,
)
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.secrets import mask_url
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:  # httpx costs ~0.15 s to import; only a network lookup needs it
    import httpx

MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}

Entry = Path | KnownMissing | None


class HubError(ValueError):
    """A hub lookup that failed: one line naming the repo and file, never the token."""


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class _Answer:
    """What the hub answered: status, commit, ETag and error code of its own response."""

    __repr__ = fields_repr

    status: int
    commit: str | None  # X-Repo-Commit of the hub's own response (not the CDN's)
    etag: str | None  # X-Linked-Etag (LFS) or ETag of the hub's own response
    error_code: str | None  # X-Error-Code: GatedRepo, RepoNotFound, EntryNotFound, RevisionNotFound
    content: bytes
    url: str  # where the final response came from


class HubFiles:
    def __init__(self, cache: HubCache, *, endpoint: str, token: str | None, offline: bool,
                 transport: httpx.BaseTransport | None = None, timeout: float = 10.0):
        self.cache = cache
        self.endpoint = endpoint.rstrip("/")
        self.offline = offline
        self._token = token
        self._transport = transport
        self._timeout = timeout
        self._settled: dict[tuple[str, str], str] = {}  # (repo, moving revision) -> commit, checked this run
        self._texts: dict[tuple[str, str, str], str] = {}  # (repo, commit, file) -> text fetched this run

    # --- public ------------------------------------------------------------------------------------------
    def cached(self, repo: str, filename: str, revision: str = "main") -> bool:
        """Whether the cache holds the file at the revision's last known commit (no network). A name that cannot
        be a hub repo or file is not cached (the catalog may still know it)."""
        try:
            check_repo_file(repo, filename, revision)
        except ValueError:
            return False
        return isinstance(self._known(repo, filename, revision)[1], Path)

    def locate(self, repo: str, filename: str, revision: str = "main") -> tuple[str | None, Entry]:
        """(commit, cache entry): offline, pinned or already checked this run from the cache alone; otherwise a
        cached entry is first checked against the hub (one HEAD request)."""
        check_repo_file(repo, filename, revision)
        commit, entry = self._known(repo, filename, revision)
        if entry is None or self.offline or self._is_settled(repo, revision):
            return commit, entry
        return self._revalidate(repo, filename, revision, commit, entry)

    def text(self, repo: str, filename: str, revision: str = "main") -> str | None:
        """The file's text, or None when the hub says it does not exist (HTTP 404)."""
        commit, entry = self.locate(repo, filename, revision)
        if entry is MISSING:
            return None
        if isinstance(entry, Path):  # the cache is a folder anyone can write: a FIFO there is refused
            try:
                return read_text_file(entry, MAX_INDEX_BYTES)
            except ValueError as exc:
                raise HubError(f"cached {repo}/{filename}: {exc}") from None
        if commit and (repo, commit, filename) in self._texts:
            return self._texts[(repo, commit, filename)]
        if self.offline:
            raise HubError(f"offline: {self.offline_miss(repo, filename, revision)}")
        settled = commit if commit and self._is_settled(repo, revision) else None
        answer = self._get(repo, filename, settled or revision)
        return self._keep(repo, filename, revision, answer)

    def range_reader(self, repo: str, filename: str, revision: str = "main") -> Callable[[int, int], bytes]:
        """read(offset, size) of a remote file by HTTP range requests: the first through the hub (which names
        the commit and may redirect to its CDN), the rest straight to where that one was answered from."""
        check_repo_file(repo, filename, revision)
        target = revision if is_commit(revision) else self._settled.get((repo, revision), revision)
        answered_from: list[str] = []

        def read(offset: int, size: int) -> bytes:
            headers = {"Range": f"bytes={offset}-{offset + size - 1}"}
            if answered_from:
                answer = self._checked(self._exchange("GET", answered_from[0], repo, filename, headers),
                                       repo, filename, target)
            else:
                answer = self._get(repo, filename, target, headers)
                if answer.commit:
                    self._settle(repo, revision, answer.commit)
                answered_from.append(answer.url)
            if answer.status == 404:
                raise HubError(f"hub has no {repo}/{filename} at revision '{target}' (HTTP 404)")
            return answer.content if answer.status == 206 else answer.content[offset:offset + size]

        return read

    def offline_miss(self, repo: str, filename: str, revision: str = "main") -> str:
        commit = revision if is_commit(revision) else self.cache.ref(repo, revision)
        if commit is None:
            return f"the hub cache {self.cache.root} has no {repo}/{filename} (no ref '{revision}' for the repo)"
        return (f"the hub cache {self.cache.root} has no {repo}/{filename} at commit {commit[:12]} "
                f"(revision '{revision}')")

    # --- the cache -----------------------------------------------------------------------------------------
    def _is_settled(self, repo: str, revision: str) -> bool:
        return is_commit(revision) or (repo, revision) in self._settled

    def _known(self, repo: str, filename: str, revision: str) -> tuple[str | None, Entry]:
        if is_commit(revision):
            commit: str | None = revision
        else:
            commit = self._settled.get((repo, revision)) or self.cache.ref(repo, revision)
        return commit, (self.cache.lookup(repo, commit, filename) if commit else None)

    def _settle(self, repo: str, revision: str, commit: str) -> None:
        if not is_commit(revision):
            self._settled[(repo, revision)] = commit
            self.cache.write_ref(repo, revision, commit)

    def _revalidate(self, repo: str, filename: str, revision: str, commit: str | None,
                    entry: Entry) -> tuple[str | None, Entry]:
        try:
            answer = self._exchange("HEAD", self._url(repo, filename, revision), repo, filename)
        except HubError:
            answer = None
        if answer is None or not answer.commit or (answer.status >= 400 and answer.status != 404):
            # The hub is unreachable, refuses, or is not the hub: the cached copy serves (huggingface_hub's rule
            # too), and the run does not ask again.
            if commit:
                self._settled[(repo, revision)] = commit
            return commit, entry
        self._settle(repo, revision, answer.commit)
        if answer.commit == commit:
            return commit, entry
        if answer.status == 404:
            self.cache.mark_missing(repo, answer.commit, filename)
            return answer.commit, MISSING
        blob = etag_name(answer.etag)
        return answer.commit, (self.cache.link(repo, answer.commit, filename, blob) if blob else None)

    def _keep(self, repo: str, filename: str, revision: str, answer: _Answer) -> str | None:
        if answer.commit:
            self._settle(repo, revision, answer.commit)
        if answer.status == 404:
            if answer.commit and answer.error_code not in ("RepoNotFound", "RevisionNotFound"):
                self.cache.mark_missing(repo, answer.commit, filename)
            return None
        try:
            text = answer.content.decode("utf-8")
        except UnicodeDecodeError:
            raise HubError(f"hub sent {repo}/{filename} as something other than UTF-8 text") from None
        if answer.commit:  # an answer that names no commit (a plain mirror) is used but not cached
            self.cache.store(repo, answer.commit, filename, blob_name(answer.etag, answer.content), answer.content)
            self._texts[(repo, answer.commit, filename)] = text
        return text

    # --- HTTP ----------------------------------------------------------------------------------------------
    def _url(self, repo: str, filename: str, revision: str) -> str:
        return f"{self.endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(filename)}"

    def _get(self, repo: str, filename: str, revision: str, headers: dict[str, str] | None = None) -> _Answer:
        answer = self._exchange("GET", self._url(repo, filename, revision), repo, filename, headers)
        return self._checked(answer, repo, filename, revision)

    def _checked(self, answer: _Answer, repo: str, filename: str, revision: str) -> _Answer:
        if answer.status in (401, 403):
            raise HubError(self._refused(repo, filename, answer))
        if answer.status == 404 or answer.status in (200, 206):
            return answer
        raise HubError(f"hub answered HTTP {answer.status} for {repo}/{filename} at revision '{revision}'")

    def _refused(self, repo: str, filename: str, answer: _Answer) -> str:
        kind = "a gated repo" if answer.error_code == "GatedRepo" else "gated or private, or no such repo"
        page = f"{mask_url(self.endpoint)}/{repo}"  # an endpoint's user info or token stays out of the hint
        if self._token:
            ask = (f"the token sent (HF_TOKEN or the token file) has no access: accept the licence on {page} "
                   "with its account, or use a token that has")
        else:
            ask = f"no token was sent: set HF_TOKEN (or run `huggingface-cli login`) and accept the licence on {page}"
        return f"hub refused {repo}/{filename} (HTTP {answer.status}, {kind}): {ask}"

    def _on_hub(self, url: str) -> bool:
        """Whether a URL is on the hub's origin (the token goes nowhere else); core.urls is imported only when a
        request is made, not by an offline run."""
        from gpustack_guard.core.urls import origin

        return origin(url) == origin(self.endpoint)

    def _headers(self, url: str, extra: dict[str, str] | None) -> dict[str, str]:
        headers = dict(extra or {})
        if self._token and self._on_hub(url):
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _exchange(self, method: str, url: str, repo: str, filename: str,
                  headers: dict[str, str] | None = None) -> _Answer:
        """One request and the redirects after it, each hop with the token only when it goes to the hub host.
        A HEAD stops at a redirect off the hub: the metadata is on the hub's own answer."""
        import httpx

        from gpustack_guard.adapters.proxy_env import PROXY_ERRORS, proxy_problem

        hub_response = None
        try:  # httpx reads the proxy variables here: one it cannot use is the lookup's failure, not a crash
            session = httpx.Client(timeout=self._timeout, transport=self._transport, follow_redirects=False)
        except PROXY_ERRORS as exc:
            raise HubError(f"hub lookup of {repo}/{filename}: {proxy_problem(exc)}") from None
        try:
            with session as client:
                for _ in range(MAX_REDIRECTS + 1):
                    response = client.request(method, url, headers=self._headers(url, headers))
                    on_hub = self._on_hub(url)
                    if on_hub:
                        hub_response = response
                    location = response.headers.get("Location")
                    if response.status_code not in _REDIRECTS or not location:
                        break
                    following = urljoin(url, location)
                    if method == "HEAD" and not self._on_hub(following):
                        break
                    url = following
                else:
                    raise HubError(f"hub lookup of {repo}/{filename}: more than {MAX_REDIRECTS} redirects")
        except httpx.TimeoutException:
            raise HubError(f"hub lookup of {repo}/{filename}: no answer within {self._timeout:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            from gpustack_guard.adapters.gpustack.transport import BAD_LOCATION, bad_location

            why = BAD_LOCATION if bad_location(exc) else _one_line(exc)
            raise HubError(f"hub lookup of {repo}/{filename} failed: {why}") from None
        meta = hub_response.headers if hub_response is not None else response.headers
        commit = meta.get("X-Repo-Commit")
        return _Answer(status=response.status_code, commit=commit if commit and is_commit(commit) else None,
                       etag=meta.get("X-Linked-Etag") or meta.get("ETag"), error_code=meta.get("X-Error-Code"),
                       content=response.content, url=url)


def _one_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
