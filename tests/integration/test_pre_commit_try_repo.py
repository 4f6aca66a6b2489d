"""The shipped pre-commit hook as a user meets it: `pre-commit try-repo` of this checkout from a fresh git
repository of their own, with the hook's default args. Integration: pre-commit builds the hook's virtualenv by
installing gsg and its dependencies with pip (about 30 s; the package index is reached)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import FLEET, REPO

pytestmark = pytest.mark.integration
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="pre-commit is not installed beside this Python")
def test_try_repo_runs_the_validate_hook_in_a_users_repository(tmp_path):
    user = tmp_path / "user"
    shutil.copytree(REPO / "specs", user / "specs", ignore=shutil.ignore_patterns("overlays"))
    (user / "fleets").mkdir()
    shutil.copy(FLEET, user / "fleets" / "prod.yaml")
    (user / "specs" / "gsg.yaml").write_text("project: user-team\nfleet: ../fleets/prod.yaml\n")
    _git(user, "init", "-q", ".")
    _git(user, "add", "-A")
    _git(user, "commit", "-q", "-m", "specs")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "HF_TOKEN": "hf_test_token"}
    done = subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), "gsg-validate", "--all-files"], cwd=user,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gsg validate" in done.stdout and "Passed" in done.stdout
    (user / "fleets" / "prod.yaml").unlink()  # the near miss: the hook reads the snapshot gsg.yaml names
    _git(user, "add", "-A")
    _git(user, "commit", "-q", "-m", "no snapshot")
    failed = subprocess.run([str(PRE_COMMIT), "try-repo", str(REPO), "gsg-validate", "--all-files"], cwd=user,
                            env=env, capture_output=True, text=True, timeout=900)
    assert failed.returncode == 1 and "fleets/prod.yaml: fleet snapshot file not found" in failed.stdout
