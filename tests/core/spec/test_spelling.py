"""core/spec/spelling.py: near-misses of enum values (look-alikes, invisible characters, spaces, case,
separators) and what sets them apart."""

import pytest

from gpustack_guard.core.spec.model import BUILTIN_BACKENDS, COMMUNITY_BACKENDS, PLACEMENT_STRATEGIES, SOURCES
from gpustack_guard.core.spec.spelling import key, near_miss, suggest

BACKENDS = BUILTIN_BACKENDS + COMMUNITY_BACKENDS

NEAR_MISSES = [
    ("vLL\u041c", BACKENDS, "vLLM", "a look-alike letter U+041C cyrillic capital letter em in place of 'M'"),
    ("SGL\u0430ng", BACKENDS, "SGLang", "a look-alike letter U+0430 cyrillic small letter a in place of 'a'"),
    ("\u03bdLLM", BACKENDS, "vLLM", "a look-alike letter U+03BD greek small letter nu in place of 'v'"),
    ("vLLM ", BACKENDS, "vLLM", "trailing whitespace"),
    (" vLLM", BACKENDS, "vLLM", "leading whitespace"),
    ("vLLM\u00a0", BACKENDS, "vLLM", "trailing whitespace (U+00A0 no-break space)"),
    ("v\u200bLLM", BACKENDS, "vLLM", "an invisible character U+200B zero width space"),
    ("vLLM\u2060", BACKENDS, "vLLM", "an invisible character U+2060 word joiner"),
    ("vllm", BACKENDS, "vLLM", "the case"),
    ("VLLM", BACKENDS, "vLLM", "the case"),
    ("Sglang", BACKENDS, "SGLang", "the case"),
    ("llama-cpp", BACKENDS, "llama.cpp", "the separators (spaces, '-', '_', '.')"),
    ("llamacpp", BACKENDS, "llama.cpp", "the separators (spaces, '-', '_', '.')"),
    ("Llama_CPP", BACKENDS, "llama.cpp", "the case and the separators (spaces, '-', '_', '.')"),
    ("tensorrt_llm", BACKENDS, "TensorRT-LLM", "the case and the separators (spaces, '-', '_', '.')"),
    ("\uff56\uff2c\uff2c\uff2d", BACKENDS, "vLLM",
     "a compatibility character U+FF56 fullwidth latin small letter v in place of 'v', a compatibility character "
     "U+FF2C fullwidth latin capital letter l in place of 'L' and a compatibility character U+FF2D fullwidth latin "
     "capital letter m in place of 'M'"),
    ("huggingface ", SOURCES, "huggingface", "trailing whitespace"),
    ("Hugging-Face", SOURCES, "huggingface", "the case and the separators (spaces, '-', '_', '.')"),
    ("local-path", SOURCES, "local_path", "the separators (spaces, '-', '_', '.')"),
    ("ModelScope", SOURCES, "model_scope", "the case and the separators (spaces, '-', '_', '.')"),
    ("Bin Pack", PLACEMENT_STRATEGIES, "binpack", "the case and the separators (spaces, '-', '_', '.')"),
]


@pytest.mark.parametrize("value,options,known,why", NEAR_MISSES)
def test_near_miss_names_the_value_and_the_difference(value, options, known, why):
    miss = near_miss(value, options)
    assert miss is not None and (miss.known, miss.why) == (known, why)


# exact values, and names that are not near any known one (community or custom backends stay warnings)
@pytest.mark.parametrize("value", ["vLLM", "llama.cpp", "TurboServe", "vLMM", "vLLM-0.11", "SGLang2", "", " "])
def test_exact_or_far_values_are_no_near_miss(value):
    assert near_miss(value, BACKENDS) is None


def test_the_key_folds_look_alikes_invisibles_case_and_separators():
    assert key("v\u200bL\u041c-L m\u00a0") == "vlmlm"
    assert key("TensorRT-LLM") == key("tensorrt_llm") == "tensorrtllm"


@pytest.mark.parametrize("value,expected", [("hugingface", "huggingface"), ("binpak", "binpack"),
                                            ("vllm", "vLLM"), ("nothing-like-it", None)])
def test_suggest_prefers_a_near_miss_then_a_close_typo(value, expected):
    options = SOURCES + PLACEMENT_STRATEGIES + BACKENDS
    assert suggest(value, options) == expected


def test_a_huge_value_is_matched_quickly():
    assert near_miss("v" * 2_000_000, BACKENDS) is None
    assert suggest("v" * 2_000_000, BACKENDS) is None
