"""The proxy variables httpx reads from the environment, as gsg names them when httpx cannot use them."""

from __future__ import annotations

import os
from typing import Mapping

import httpx

from gpustack_guard.adapters.gpustack.transport import printable
from gpustack_guard.core.secrets import MASK, mask_url, url_secrets

PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
# what httpx.Client raises on a proxy URL it cannot use: an unknown scheme (ValueError), a SOCKS proxy without
# socksio (ImportError), a malformed URL (httpx.InvalidURL, which is no ValueError)
PROXY_ERRORS = (ValueError, ImportError, httpx.InvalidURL)


def proxy_settings(environ: Mapping[str, str] = os.environ) -> list[tuple[str, str]]:
    """(variable, URL) of each proxy variable httpx reads that is set, in either case."""
    return [(name, environ[name]) for upper in PROXY_VARIABLES for name in (upper, upper.lower())
            if environ.get(name)]


def proxy_problem(exc: Exception, environ: Mapping[str, str] = os.environ) -> str:
    """Why httpx refused the environment's proxy settings, in one line without their credentials."""
    settings = proxy_settings(environ)
    if isinstance(exc, ImportError):
        why = "a SOCKS proxy needs the 'socksio' package (pip install 'httpx[socks]')"
    else:
        text = str(exc).strip()
        why = printable(text.splitlines()[0] if text else type(exc).__name__, 200)
        for _name, url in settings:  # httpx hides a password as [secure] but may still show the user name
            for secret in url_secrets(url):
                why = why.replace(secret, MASK)
    shown = ", ".join(f"{name}={printable(mask_url(url), 120)}" for name, url in settings) or "none set"
    return f"the proxy settings in the environment cannot be used ({shown}): {why}"
