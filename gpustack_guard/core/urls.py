"""Whether a URL given to gsg (--server, GSG_URL, a context's server, soak's endpoints) is one it can use (pure).

Checked before any connection: a URL httpx cannot parse would otherwise end as an internal error deep in a
request, and one with a space or a control character may be cut or rewritten on its way to the server.
"""

from __future__ import annotations

import re

from gpustack_guard.core.secrets import mask_url, misplaced_user_info

SCHEMES = ("http", "https")
MAX_URL_CHARS = 2048  # past this it is not an endpoint someone typed; servers refuse such request lines anyway
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_HOST_CHAR = re.compile(r"[A-Za-z0-9._~%!$&'()*+,;=\-]")  # of a reg-name (RFC 3986); IPv6 is bracketed apart
_IPV6 = re.compile(r"^\[[0-9A-Fa-f:.]+(%25[A-Za-z0-9._~\-]+)?\]$")


def url_problem(url: str) -> str | None:
    """What is wrong with an http(s) endpoint URL, in a few words; None when nothing is. The text never echoes
    the URL (the caller shows it masked)."""
    if not url:
        return "is empty"
    if len(url) > MAX_URL_CHARS:
        return f"is longer than {MAX_URL_CHARS:,} characters"
    if any(char.isspace() or ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in url):
        return "has a space or a control character (percent-encode it, %20)"
    scheme = _SCHEME.match(url)
    if scheme is None:
        return "has no scheme: write http://HOST[:PORT] or https://HOST[:PORT]"
    if scheme.group(1).lower() not in SCHEMES:
        return f"has the scheme '{scheme.group(1)}': gsg speaks http:// and https:// only"
    if misplaced_user_info(url):  # before the host and port: read here, a password's piece is the port echoed
        return ("has user info after a '/', '?' or '#' (a password or user name holding one): percent-encode it "
                "there (%2F, %3F, %23)")
    authority = re.split(r"[/?#]", url[scheme.end():], maxsplit=1)[0].rpartition("@")[2]
    host, port = _host_and_port(authority)
    if not host:
        return "has no host"
    if host.startswith("["):
        if not _IPV6.match(host):
            return "has an IPv6 host that is not valid (write it in brackets: http://[::1]:8080)"
    elif not all(_HOST_CHAR.match(char) or (not char.isascii() and char.isalnum()) for char in host):
        return "has a host name with characters a host name cannot have"  # an IDN's letters it may
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        return f"has the port '{port[:20]}': a port is a number from 1 to 65535"
    return None


def _host_and_port(authority: str) -> tuple[str, str | None]:
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            return authority, None
        rest = authority[close + 1:]
        if rest and not rest.startswith(":"):
            return authority, None  # text after the brackets: the host check refuses it
        return authority[:close + 1], (rest[1:] if rest else None)
    host, colon, port = authority.rpartition(":") if ":" in authority else (authority, "", "")
    return host, (port if colon else None)


SHOWN_URL_CHARS = 200  # of a refused URL echoed in its message: enough to recognise it


def shown_url(url: str) -> str:
    """A URL as a message quotes it: masked (core.secrets.mask_url), control characters as escapes, cut short."""
    masked = mask_url(url)
    if len(masked) > SHOWN_URL_CHARS:
        masked = masked[:SHOWN_URL_CHARS] + "..."
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in masked)


def bad_url(url: str) -> str | None:
    """"'URL' <what is wrong>" for a URL gsg cannot use (the caller names the option before it); else None."""
    problem = url_problem(url)
    return None if problem is None else f"'{shown_url(url)}' {problem}"


_DEFAULT_PORTS = {"http": "80", "https": "443"}


def same_server(first: str | None, second: str | None) -> bool:
    """Whether two server URLs name one server: scheme and host compared without case, a default port equal to
    none, user info, query and a trailing slash ignored (a saved plan records the URL masked)."""
    return first is not None and second is not None and _server_key(first) == _server_key(second)


def origin(url: str) -> tuple[str, str, str]:
    """A URL's origin (RFC 6454): scheme and host without case, the scheme's default port when none is given;
    a credential meant for one origin goes to no other (soak's reference endpoint, the hub's redirects)."""
    return _server_key(url)[:3]


def _server_key(url: str) -> tuple[str, str, str, str]:
    scheme = _SCHEME.match(url)
    name = scheme.group(1).lower() if scheme else ""
    rest = url[scheme.end():] if scheme else url
    authority, _, path = rest.partition("/")
    authority = authority.split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    host, port = _host_and_port(authority)
    path = path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return name, host.lower(), port or _DEFAULT_PORTS.get(name, ""), path
