"""Connecting to a GPUStack server: key from GSG_API_KEY or a file (never a bare flag), version gate, auth check."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gpustack_guard.core.errors import GsgError
from gpustack_guard.adapters.files.output import register_secret

# Tests replace this with an in-memory GPUStack (httpx.MockTransport); None means the real network.
transport_factory = None
# Tests replace this to record retry pauses instead of sleeping; None means time.sleep.
retry_sleep = None


@dataclass
class Connection:
    client: object  # GPUStackClient
    version: str
    last_fleet: object = None  # the fleet fetched last (drift reads its instances without another call)
    last_models: list | None = None  # the model list fetched with it (plan reuses it)

    def fleet(self):
        from gpustack_guard.adapters.gpustack.live_fleet import fetch_fleet

        self.last_fleet, self.last_models = fetch_fleet(self.client, self.version)
        return self.last_fleet

    @property
    def supports_export(self) -> bool:
        from gpustack_guard.core.versions import parse_version

        return (parse_version(self.version) or (0,)) >= (2, 3, 0)


def read_api_key(api_key_file: str | None) -> str | None:
    if api_key_file:
        try:
            key = Path(api_key_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise GsgError(exc.strerror or "cannot be read", where=api_key_file) from None
        if not key:
            raise GsgError("the API key file is empty", where=api_key_file)
    else:
        key = os.environ.get("GSG_API_KEY", "").strip() or None
    register_secret(key)  # scrubbed from every line gsg prints, whatever happens
    return key


def connect(server: str, api_key_file: str | None = None, ca_bundle: str | None = None,
            insecure: bool = False, timeout: float = 15.0) -> Connection:
    from gpustack_guard.adapters.gpustack.client import GPUStackClient, Limits, redact_url, url_password
    from gpustack_guard.core.versions import parse_version

    register_secret(url_password(server))
    shown = redact_url(server)
    key = read_api_key(api_key_file)
    if ca_bundle and not Path(ca_bundle).is_file():
        raise GsgError("CA bundle not found", where=ca_bundle)
    verify: bool | str = False if insecure else (ca_bundle or True)
    transport = transport_factory() if transport_factory else None
    client = GPUStackClient(server, key, timeout=timeout, verify=verify, transport=transport,
                            limits=Limits.from_env(), **({"sleep": retry_sleep} if retry_sleep else {}))
    version = str(client.version().get("version", ""))
    parsed = parse_version(version)
    if parsed is None or parsed < (2, 0, 0):
        raise GsgError(f"GPUStack {version or '(unknown version)'} is not supported: gsg speaks the /v2 API of "
                       "GPUStack 2.x", where=shown)
    if not key:
        raise GsgError("no API key: set GSG_API_KEY or pass --api-key-file (a key with the management scope)")
    client.me()
    return Connection(client, version)
