"""Workload files: the examples load, every mistake is one line with file:line:column, the schema is generated."""

import json

import pytest
from support import REPO

from gpustack_guard.adapters.files.workload_file import load_workload, load_workloads
from gpustack_guard.core.advise.workload import workload_schema
from gpustack_guard.core.errors import GsgError

GOOD = """name: chat
prompt_tokens: {p50: 400, p95: 1500, p99: 2500}
output_tokens: {p50: 200, p95: 600, p99: 1000}
concurrency: 48
"""


def test_example_workloads_load_with_their_numbers():
    folder = REPO / "workloads"
    chat, batch = load_workloads([str(folder / "chat.yaml"), str(folder / "nightly-batch.yaml")])
    assert (chat.name, chat.concurrency, chat.p95_tokens, chat.p99_tokens, chat.interactive) == \
        ("chat", 48, 2100, 3500, True)
    assert (batch.name, batch.concurrency, batch.p95_tokens, batch.p99_tokens, batch.interactive) == \
        ("nightly-batch", 2, 31000, 32500, False)


@pytest.mark.parametrize("text, where, says", [
    (GOOD.replace("concurrency: 48", "concurrency: '48'"), ":4:14", "'concurrency': Input should be a valid integer"),
    (GOOD + "burst_factor: 2\n", ":5:1", "'burst_factor': unknown field"),
    (GOOD.replace("p95: 1500", "p95: 3000"), ":2:16", "p50 400 <= p95 3000 <= p99 2500"),
    (GOOD.replace("name: chat\n", ""), ":1:1", "'name': Field required"),
    (GOOD + "pattern: nightly\n", ":5:10", "'pattern': Input should be 'steady', 'burst' or 'batch'"),
    ("name: [unclosed\n", ":1:7", "not closed"),
    (GOOD.replace("name: chat", "name: ../chat"), ":1:7", "'name': String should match pattern"),
])
def test_mistakes_are_one_line_with_the_position(tmp_path, text, where, says):
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(GsgError) as caught:
        load_workload(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}{where}: ") and says in message and "\n" not in message


def test_two_workloads_of_one_name_are_refused(tmp_path):
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    with pytest.raises(GsgError, match=r"b\.yaml: workload 'chat' is also defined in .*a\.yaml"):
        load_workloads([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])


def test_committed_schema_is_the_generated_one():
    committed = json.loads((REPO / "schema" / "workload.schema.json").read_text())
    assert committed == workload_schema(), "stale: regenerate it as README's Advise section says"
    assert committed["required"] == ["name", "prompt_tokens", "output_tokens", "concurrency"]
    assert committed["properties"]["pattern"]["enum"] == ["steady", "burst", "batch"]


def test_example_files_validate_against_the_schema():
    import jsonschema
    import yaml

    schema = json.loads((REPO / "schema" / "workload.schema.json").read_text())
    for path in sorted((REPO / "workloads").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
