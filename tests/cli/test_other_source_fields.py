"""A field of another source beside the spec's own (huggingface_repo_id with model_scope_model_id): GPUStack's
ModelSource checks only the source's own field and stores the rest unread, so the spec deploys a model other
than the one its reader may think. One GSG006 warning at the unused field's line; the spec's own fields none."""

import json

import pytest
from support import FLEET

HEAD = "name: t\n"
TAIL = ("gpu_selector:\n  gpu_ids: [gpu-c:cuda:0]\nbackend: vLLM\nbackend_version: 0.11.0\n"
        "backend_parameters: [--max-model-len=4096, --max-num-seqs=16, --enforce-eager]\n")


@pytest.mark.parametrize("source,fields,line,expected", [
    ("huggingface", "huggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\nmodel_scope_model_id: qwen/Qwen2.5-14B-Instruct\n",
     4, "spec.yaml:4:23: warning GSG006 source-id [t]: model_scope_model_id is set but source is 'huggingface': "
        "GPUStack reads only huggingface_repo_id and keeps this one unused (gsg sizes huggingface_repo_id too)"),
    ("huggingface", "huggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\nlocal_path: /models/qwen-14b\n",
     4, "spec.yaml:4:13: warning GSG006 source-id [t]: local_path is set but source is 'huggingface': GPUStack reads "
        "only huggingface_repo_id and keeps this one unused (gsg sizes huggingface_repo_id too)"),
    ("model_scope", "model_scope_model_id: qwen/Qwen2.5-7B-Instruct\nhuggingface_filename: x.gguf\n",
     4, "spec.yaml:4:23: warning GSG006 source-id [t]: huggingface_filename is set but source is 'model_scope': "
        "GPUStack reads only model_scope_model_id and keeps this one unused (gsg sizes model_scope_model_id too)"),
])
def test_a_field_of_another_source_is_one_warning_at_its_line(gsg, tmp_path, source, fields, line, expected):
    (tmp_path / "spec.yaml").write_text(HEAD + f"source: {source}\n" + fields + TAIL)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG006", cwd=tmp_path)
    assert result.code == 0, result.out + result.err  # a warning: the default fail level is error
    assert result.out.splitlines()[0] == expected, result.out
    strict = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG006",
                 "--fail-level", "warning", "-o", "json", cwd=tmp_path)
    assert strict.code == 1
    assert [(f["rule_id"], f["line"]) for f in json.loads(strict.out)["findings"]] == [("GSG006", line)]


def test_the_sources_own_fields_are_no_finding(gsg, tmp_path):
    (tmp_path / "spec.yaml").write_text(HEAD + "source: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n"
                                        "huggingface_filename: '*.safetensors'\n" + TAIL)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG006", cwd=tmp_path)
    assert result.code == 0 and "GSG006" not in result.out, result.out


def test_the_other_sources_fields_table_is_the_nested_loops_order():
    # _check_source reads a table made once per source (issue 34, fourteenth round): the same fields, paired with
    # the source that reads them, in the order the loop over SOURCE_FIELDS took them (findings keep that order)
    from gpustack_guard.core.spec.check import OTHER_SOURCES_FIELDS, SOURCE_FIELDS

    for source in SOURCE_FIELDS:
        long_way = [(unused, other) for other, fields in SOURCE_FIELDS.items()
                    for unused in (fields if other != source else ())]
        assert list(OTHER_SOURCES_FIELDS[source]) == long_way
    assert set(OTHER_SOURCES_FIELDS) == set(SOURCE_FIELDS)


def test_every_other_sources_field_is_a_warning_in_field_order(gsg, tmp_path):
    (tmp_path / "spec.yaml").write_text(HEAD + "source: local_path\nlocal_path: /models/qwen\n"
                                        "model_scope_file_path: x.gguf\nhuggingface_filename: y.gguf\n"
                                        "model_scope_model_id: qwen/Qwen2.5-7B-Instruct\n"
                                        "huggingface_repo_id: Qwen/Qwen2.5-7B-Instruct\n" + TAIL)
    result = gsg("validate", "spec.yaml", "--fleet", str(FLEET), "--offline", "--select", "GSG006", "-o", "json",
                 cwd=tmp_path)
    found = [(f["line"], f["message"].split(" ", 1)[0]) for f in json.loads(result.out)["findings"]]
    assert found == [(4, "model_scope_file_path"), (5, "huggingface_filename"), (6, "model_scope_model_id"),
                     (7, "huggingface_repo_id")]
