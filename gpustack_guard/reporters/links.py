"""Links to spec lines that work where markdown is read: pull-request comments and job summaries resolve
relative links against the wrong base, so under GitHub Actions or GitLab CI a link is absolute (the file at the
commit being checked); elsewhere it stays relative to the working directory."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote


def _repo_path(file: str, workspace: str | None) -> str:
    path = os.path.abspath(file)
    if workspace and (path == workspace or path.startswith(workspace.rstrip(os.sep) + os.sep)):
        path = os.path.relpath(path, workspace)
    else:
        path = file
    return quote(path.replace(os.sep, "/"))


def blob_base(environ: Mapping[str, str] = os.environ) -> tuple[str, str | None] | None:
    """(URL prefix of files at this commit, the checkout folder), or None outside a known CI."""
    if environ.get("GITHUB_ACTIONS") == "true" and environ.get("GITHUB_REPOSITORY") and environ.get("GITHUB_SHA"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        return (f"{server}/{environ['GITHUB_REPOSITORY']}/blob/{environ['GITHUB_SHA']}/",
                environ.get("GITHUB_WORKSPACE"))
    if environ.get("GITLAB_CI") == "true" and environ.get("CI_PROJECT_URL") and environ.get("CI_COMMIT_SHA"):
        prefix = f"{environ['CI_PROJECT_URL'].rstrip('/')}/-/blob/{environ['CI_COMMIT_SHA']}/"
        return prefix, environ.get("CI_PROJECT_DIR")
    return None


def line_link(file: str, line: int, environ: Mapping[str, str] = os.environ) -> str:
    base = blob_base(environ)
    anchor = f"#L{line}" if line else ""
    if base is None:  # percent-encoded as in CI: a newline, space, `)` or `|` of a file name ends no link or row
        return f"{quote(file.replace(os.sep, '/'))}{anchor}"
    prefix, workspace = base
    return f"{prefix}{_repo_path(file, workspace)}{anchor}"
