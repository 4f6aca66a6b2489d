"""A small, strict client for GPUStack's `/v2` management API (httpx).

Every request has a timeout; idempotent requests are retried with backoff and jitter on connection errors
and 502/503/504; every failure becomes one ApiError line naming the endpoint (never the API key).
"""

from __future__ import annotations

import json
import random
import time
from typing import Any, Callable

import httpx

from gpustack_guard.core.errors import GsgError

IDEMPOTENT = {"GET", "PUT", "DELETE", "HEAD"}
RETRY_STATUS = {502, 503, 504}
HINTS = {
    401: "the API key is missing, wrong or expired (GSG_API_KEY / --api-key-file)",
    403: "the API key needs the 'management' scope and the organisation OWNER role (or a platform admin)",
}


class ApiError(GsgError):
    """One GPUStack call failed; `status` is None for transport failures."""

    def __init__(self, method: str, path: str, message: str, status: int | None = None, reason: str = ""):
        self.method, self.path, self.status, self.reason = method, path, status, reason
        self.detail = message
        super().__init__(message, where=f"{method} {path}")


class GPUStackClient:
    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 15.0,
                 verify: bool | str = True, retries: int = 3, backoff: float = 0.5,
                 transport: httpx.BaseTransport | None = None, sleep: Callable[[float], None] = time.sleep):
        if not base_url.startswith(("http://", "https://")):
            raise GsgError(f"server URL must start with http:// or https://, got '{base_url}'")
        headers = {"Accept": "application/json", "User-Agent": "gpustack-guard"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, verify=verify,
                                  transport=transport, follow_redirects=False)
        self.retries, self.backoff, self._sleep = retries, backoff, sleep

    def close(self) -> None:
        self._http.close()

    # --- transport ---------------------------------------------------------------------------------------
    def request(self, method: str, path: str, *, params: dict | None = None, json_body: Any = None,
                expect_json: bool = True) -> Any:
        attempts = self.retries + 1 if method in IDEMPOTENT else 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.request(method, path, params=params, json=json_body)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if last:
                    raise ApiError(method, path, f"cannot connect to {self.base_url}: {_short(exc)}") from None
                self._pause(attempt)
                continue
            except httpx.TimeoutException:
                raise ApiError(method, path, f"timed out after {self._http.timeout.read}s") from None
            except httpx.HTTPError as exc:
                raise ApiError(method, path, f"request failed: {_short(exc)}") from None
            if response.status_code in RETRY_STATUS and not last:
                self._pause(attempt)
                continue
            return self._result(method, path, response, expect_json)
        raise AssertionError("unreachable")  # pragma: no cover

    def _pause(self, attempt: int) -> None:
        delay = self.backoff * (2 ** attempt)
        self._sleep(delay + random.uniform(0, delay / 2))  # jitter: retries from many CI jobs do not align

    def _result(self, method: str, path: str, response: httpx.Response, expect_json: bool) -> Any:
        if response.status_code >= 400:
            raise _api_error(method, path, response)
        if not expect_json:
            return response.text
        if not response.content:
            return None
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ApiError(method, path, f"HTTP {response.status_code} but the body is not JSON "
                                         f"(is {self.base_url} a GPUStack server?)") from None

    # --- lists -------------------------------------------------------------------------------------------
    def list_all(self, path: str, params: dict | None = None) -> list[dict]:
        """Every item: `page=-1` first (GPUStack's own client does this); walk `pagination` if the server pages."""
        body = self.request("GET", path, params={**(params or {}), "page": -1})
        items, pagination = _envelope("GET", path, body)
        if not pagination or pagination.get("totalPage", 1) <= 1 or len(items) >= pagination.get("total", 0):
            return items
        items, page = [], 1
        while True:
            body = self.request("GET", path, params={**(params or {}), "page": page, "perPage": 100})
            chunk, pagination = _envelope("GET", path, body)
            items.extend(chunk)
            if page >= (pagination or {}).get("totalPage", 1) or not chunk:
                return items
            page += 1

    # --- endpoints ---------------------------------------------------------------------------------------
    def version(self) -> dict:
        body = self.request("GET", "/version")
        if not isinstance(body, dict) or "version" not in body:
            raise ApiError("GET", "/version", "unexpected answer: is this a GPUStack server?")
        return body

    def me(self) -> dict:
        return self.request("GET", "/v2/users/me")

    def clusters(self) -> list[dict]:
        return self.list_all("/v2/clusters")

    def workers(self, cluster_id: int | None = None) -> list[dict]:
        return self.list_all("/v2/workers", {"cluster_id": cluster_id} if cluster_id else None)

    def model_instances(self, cluster_id: int | None = None, model_id: int | None = None) -> list[dict]:
        params = {k: v for k, v in (("cluster_id", cluster_id), ("model_id", model_id)) if v}
        return self.list_all("/v2/model-instances", params or None)

    def models(self, cluster_id: int | None = None) -> list[dict]:
        return self.list_all("/v2/models", {"cluster_id": cluster_id} if cluster_id else None)

    def find_model(self, name: str) -> dict | None:
        """`?search=` is a case-insensitive substring match; the exact name is matched here."""
        return next((m for m in self.list_all("/v2/models", {"search": name}) if m.get("name") == name), None)

    def get_model(self, model_id: int) -> dict:
        return self.request("GET", f"/v2/models/{model_id}")

    def create_model(self, body: dict) -> dict:
        return self.request("POST", "/v2/models", json_body=body)

    def update_model(self, model_id: int, body: dict) -> dict:
        return self.request("PUT", f"/v2/models/{model_id}", json_body=body)

    def delete_model(self, model_id: int) -> None:
        self.request("DELETE", f"/v2/models/{model_id}")

    def restart_model(self, model_id: int) -> dict:
        return self.request("POST", f"/v2/models/{model_id}/restart")

    def export_models(self, cluster_id: int | None = None, ids: list[int] | None = None) -> str:
        body = {k: v for k, v in (("cluster_id", cluster_id), ("ids", ids)) if v is not None}
        return self.request("POST", "/v2/models/export", json_body=body, expect_json=False)

    def evaluate(self, cluster_id: int, specs: list[dict]) -> list[dict]:
        body = self.request("POST", "/v2/model-evaluations", json_body={"cluster_id": cluster_id,
                                                                         "model_specs": specs})
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise ApiError("POST", "/v2/model-evaluations", "unexpected answer (no 'results' list)")
        return body["results"]


def _envelope(method: str, path: str, body: Any) -> tuple[list[dict], dict | None]:
    if isinstance(body, dict) and isinstance(body.get("items"), list):
        return body["items"], body.get("pagination")
    if isinstance(body, list):
        return body, None
    raise ApiError(method, path, "unexpected answer: no 'items' list")


def _api_error(method: str, path: str, response: httpx.Response) -> ApiError:
    status = response.status_code
    reason, message = response.reason_phrase, ""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict):
        reason = str(body.get("reason") or reason)
        message = str(body.get("message") or body.get("detail") or "")
        if isinstance(body.get("error"), dict):  # OpenAI-shaped errors on /v1
            message = str(body["error"].get("message", message))
    first = message.strip().splitlines()[0] if message.strip() else ""
    if status == 422 and "\n" in message.strip():
        first += f" (+{len(message.strip().splitlines()) - 1} lines)"
    text = f"HTTP {status} {reason}" + (f": {first}" if first else "")
    if status in HINTS:
        text += f" — {HINTS[status]}"
    return ApiError(method, path, text, status, reason)


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
