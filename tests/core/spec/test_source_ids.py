"""core/spec/source_ids.py: hub repo ids (huggingface_hub's validate_repo_id), files in a repo, local paths."""

import pytest

from gpustack_guard.core.spec import source_ids
from gpustack_guard.core.spec.source_ids import local_path, repo_file, repo_id

HF = "huggingface_repo_id"
MS = "model_scope_model_id"

BAD_IDS = [
    # (value, field, why, fix, filename)
    ("https://huggingface.co/Qwen/Qwen2.5-7B-Instruct", HF, "is a URL, not a Hugging Face repo id",
     "Qwen/Qwen2.5-7B-Instruct", None),
    ("https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/tree/main", HF, "is a URL, not a Hugging Face repo id",
     "Qwen/Qwen2.5-7B-Instruct", None),
    ("hf.co/bartowski/Llama-3.2-1B-GGUF/blob/main/Llama-3.2-1B-Q4_K_M.gguf", HF,
     "is a URL, not a Hugging Face repo id", "bartowski/Llama-3.2-1B-GGUF", "Llama-3.2-1B-Q4_K_M.gguf"),
    ("huggingface.co/org/name?x=1", HF, "is a URL, not a Hugging Face repo id", "org/name", None),
    ("https://modelscope.cn/models/qwen/Qwen2.5-7B-Instruct/summary", MS, "is a URL, not a ModelScope repo id",
     "qwen/Qwen2.5-7B-Instruct", None),
    ("https://huggingface.co/datasets/org/data", HF,
     "is a URL, not a Hugging Face repo id (`namespace/name`)", None, None),
    ("https://example.com/org/name", HF, "is a URL, not a Hugging Face repo id (`namespace/name`)", None, None),
    ("org/name ", HF, "has leading or trailing whitespace", "org/name", None),
    ("a/b/c", HF, "has more than one '/' (a repo id is `name` or `namespace/name`)", None, None),
    ("org/" + "n" * 97, HF, "has a name of 97 characters (the hub allows at most 96)", None, None),
    ("-org/name", HF, "may hold only ASCII letters, digits, '-', '_' and '.', and no part may start or end with "
     "'-' or '.'", None, None),
    ("org/name.", HF, "may hold only ASCII letters, digits, '-', '_' and '.', and no part may start or end with "
     "'-' or '.'", None, None),
    ("org/naïve", HF, "may hold only ASCII letters, digits, '-', '_' and '.', and no part may start or end with "
     "'-' or '.'", None, None),
    ("org/", HF, "may hold only ASCII letters, digits, '-', '_' and '.', and no part may start or end with "
     "'-' or '.'", None, None),
    ("org--x/name", HF, "holds '--' or '..', which the hub refuses in repo ids", None, None),
    ("org/a..b", HF, "holds '--' or '..', which the hub refuses in repo ids", None, None),
    ("org/name.git", HF, "ends in '.git' (a repo id names the repo, not its git remote)", "org/name", None),
]


@pytest.mark.parametrize("value,field,why,fix,filename", BAD_IDS)
def test_a_bad_repo_id_says_why_and_what_to_write(value, field, why, fix, filename):
    problem = repo_id(value, field)
    assert problem is not None and (problem.why, problem.fix, problem.filename) == (why, fix, filename)


@pytest.mark.parametrize("value", ["Qwen/Qwen2.5-7B-Instruct", "gpt2", "org/" + "n" * 96, "a_b/c.d-e",
                                   "unsloth/Llama-3.3-70B-Instruct-GGUF", "Org.Name/x_1"])
def test_a_good_repo_id_passes(value):
    assert repo_id(value, HF) is None


BAD_FILES = [
    ("/models/x.gguf", "is an absolute path; it names a file inside the repo (e.g. `model-Q4_K_M.gguf`)"),
    ("C:\\models\\x.gguf", "is an absolute path; it names a file inside the repo (e.g. `model-Q4_K_M.gguf`)"),
    ("../other/x.gguf", "holds a '..' component; it names a file inside the repo"),
    ("sub/../../x.gguf", "holds a '..' component; it names a file inside the repo"),
    ("https://huggingface.co/o/n/resolve/main/x.gguf", "is a URL; it names a file inside the repo"),
    ("  ", "is empty"),
]


@pytest.mark.parametrize("value", ["model-Q4_K_M.gguf", "*Q4_K_M*.gguf", "sub/dir/x.gguf", "x..y.gguf"])
def test_a_good_repo_file_passes(value):
    assert repo_file(value) is None


RELATIVE = ("is a relative path; GPUStack's server and workers resolve it against their own working directory, "
            "not the spec's folder (write the absolute path, e.g. /models/...)")
WINDOWS = ("is a Windows path; GPUStack's server and workers read it as a POSIX path, where it names no file "
           "(write the absolute path as the workers see it, e.g. /models/...)")
BAD_PATHS = [
    ("models/qwen", RELATIVE),
    ("./models/qwen", RELATIVE),
    ("~/models/qwen", "starts with '~', which nothing expands (GPUStack opens the path as written, without a "
                      "shell); write the absolute path, e.g. /home/USER/..."),
    ("C:\\models\\qwen", WINDOWS),
    ("D:/models/qwen", WINDOWS),
    ("\\\\nas\\models", WINDOWS),
]


@pytest.mark.parametrize("check,value,why", [(repo_file, v, w) for v, w in BAD_FILES]
                         + [(local_path, v, w) for v, w in BAD_PATHS])
def test_a_bad_repo_file_or_local_path_says_why(check, value, why):
    problem = check(value)
    assert problem is not None and problem.why == why


@pytest.mark.parametrize("value", ["/models/qwen", "/", "/data/C:/odd-but-posix", "/home/u/~cache"])
def test_an_absolute_posix_local_path_passes(value):
    assert local_path(value) is None


GOOD_IDS = ["Qwen/Qwen2.5-7B-Instruct", "gpt2", "org/" + "n" * 96]


@pytest.mark.parametrize("value,field", [(v, f) for v, f, *_ in BAD_IDS] + [(v, f) for v in GOOD_IDS for f in (HF, MS)])
def test_a_kept_answer_is_the_answer_the_check_gives(value, field):
    # repo_id keeps its answers by (value, field), issue 34: the first and every later call equal the check itself
    assert repo_id(value, field) == source_ids._repo_id_problem(value, field)
    assert repo_id(value, field) == source_ids._repo_id_problem(value, field)


def test_the_field_is_part_of_the_kept_answer():
    url = "https://example.com/org/name"
    assert repo_id(url, HF).why == "is a URL, not a Hugging Face repo id (`namespace/name`)"
    assert repo_id(url, MS).why == "is a URL, not a ModelScope repo id (`namespace/name`)"
    assert repo_id(url, HF).why == "is a URL, not a Hugging Face repo id (`namespace/name`)"


def test_kept_answers_are_bounded_in_number_and_in_value_length(monkeypatch):
    monkeypatch.setattr(source_ids, "_REPO_ID_ANSWERS", {})
    monkeypatch.setattr(source_ids, "MAX_REPO_IDS_KEPT", 2)
    for value in ("a/one", "a/two", "a/three"):
        assert repo_id(value, HF) is None
    assert list(source_ids._REPO_ID_ANSWERS) == [("a/one", HF), ("a/two", HF)]
    monkeypatch.setattr(source_ids, "_REPO_ID_ANSWERS", {})
    long = "org/" + "n" * source_ids.MAX_KEPT_REPO_ID_CHARS
    assert repo_id(long, HF).why == f"has a name of {len(long) - 4:,} characters (the hub allows at most 96)"
    assert source_ids._REPO_ID_ANSWERS == {}


@pytest.mark.parametrize("extra, kept", [(0, True), (1, False)])
def test_a_value_is_kept_up_to_max_kept_repo_id_chars_and_not_one_more(monkeypatch, extra, kept):
    monkeypatch.setattr(source_ids, "_REPO_ID_ANSWERS", {})
    value = "org/" + "n" * (source_ids.MAX_KEPT_REPO_ID_CHARS - 4 + extra)
    assert len(value) == 256 + extra
    assert repo_id(value, HF).why == f"has a name of {len(value) - 4:,} characters (the hub allows at most 96)"
    assert list(source_ids._REPO_ID_ANSWERS) == ([(value, HF)] if kept else [])


# _from_url compiles its case-insensitive host pattern only for a value that may be a hub URL: the same answer as
# matching the pattern on every value, past ASCII too (a dotless i matches 'i' case-insensitively).
@pytest.mark.parametrize("value", [
    "https://huggingface.co/a/b", "HTTPS://HuggingFace.CO/a/b/blob/main/x.gguf", "hf.co/a/b", "www.hf.co/a/b",
    "https://www.modelscope.cn/models/a/b", "modelscope.cn/a/b", "huggingface.co", "https://hf.co/a",
    "meta-llama/Llama-3.1-8B", "x/huggingface.co/a/b", "https://huggıngface.co/a/b", "https://example.com/a/b",
    "  https://hf.co/a/b  ",
])
def test_the_hub_url_prefilter_answers_as_the_pattern(value):
    import re

    from gpustack_guard.core.spec import source_ids as S

    match = re.compile(S._HUB_URL_PATTERN, re.IGNORECASE).match(value.strip())
    repo, _ = S._from_url(value)
    assert (repo is not None) is (match is not None and len([p for p in match.group("path").split("/") if p]) >= 2)
