"""A spec file's displayed path worked out once per folder (spec_loader._shown_in_folder, issue 34 tenth round)
is display_path's, for relative, absolute, unnormalised and working-directory paths."""

from __future__ import annotations

import itertools

from gpustack_guard.adapters.files.spec_loader import _shown_in_folder, display_path

CWDS = ["/work/repo", "/", "/w", "/work/repo/specs"]
FOLDERS = ["", ".", "./", "specs", "specs/", "specs//sub", "./specs/./sub", "specs/../other", "..", "../..", "a/b/..",
           "/", "//", "///", "/work", "/work/repo", "/work/repo/", "/work/repo/specs", "/work/repository",
           "/work/repo/../repo/specs", "/w", "/wx", "/work/repo/specs/deeper"]
NAMES = ["a.yaml", "x", "svc-0001.yaml", ".hidden.yml", "..a.yaml", "x.", "...", ".", "..", ""]


def test_every_folder_and_name_against_display_path():
    compared = 0
    for cwd in CWDS:
        folders: dict[str, str] = {}  # shared across names, as over one tree
        for folder, name in itertools.product(FOLDERS, NAMES):
            text = f"{folder}/{name}" if folder else name
            if not text:
                continue
            assert _shown_in_folder(text, cwd, folders) == display_path(text, cwd), (text, cwd)
            compared += 1
    assert compared == len(CWDS) * (len(FOLDERS) * len(NAMES) - 1)


def test_exact_answers():
    kept: dict[str, str] = {}
    assert _shown_in_folder("/work/repo/specs/a.yaml", "/work/repo", kept) == "specs/a.yaml"
    assert _shown_in_folder("/work/repo/specs/b.yaml", "/work/repo", kept) == "specs/b.yaml"
    assert kept == {"/work/repo/specs": "specs/"}
    assert _shown_in_folder("/work/repo/a.yaml", "/work/repo", kept) == "a.yaml"
    assert _shown_in_folder("./specs/../a.yaml", "/work/repo", kept) == "a.yaml"
    assert _shown_in_folder("/elsewhere/a.yaml", "/work/repo", kept) == "/elsewhere/a.yaml"
