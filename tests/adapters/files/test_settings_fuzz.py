"""Property tests over random hostile YAML (issue 31): every settings file gsg reads (fleet snapshot, workload,
contexts, project file) ends in its value or one GsgError line naming the file, never another exception; and
the loader's node bound (which decides when nodes are counted before composing) is never below the real count."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_guard.adapters.files import yaml_positions as Y
from gpustack_guard.adapters.files.contexts import load_contexts
from gpustack_guard.adapters.files.fleet_file import load_fleet
from gpustack_guard.adapters.files.project_file import read_project_file
from gpustack_guard.adapters.files.workload_file import load_workload
from gpustack_guard.core.errors import GsgError

PIECES = ["a", "b: ", "- ", "[", "]", "{", "}", ", ", ": ", "\n", "\n  ", "? ", "&x ", "*x", "<<: ", "'q'", '"d"',
          "!!bool ", "!!timestamp ", "!!null ", "!!int ", "!!str ", "!!set ", "!!omap ", "!!binary ", "!!python/tuple ",
          "!t ", "! ", "---\n", "...\n", "~", "yes", "0x1F", "1e3", "2001-12-14", "|\n  x", "#c", "\t", "é"]
SEEDS = {
    "fleet": "clusters:\n  - name: c\n    workers:\n      - name: w\n        gpus:\n          - {index: 0, name: G, "
             "memory: {total: 24GiB}}\n",
    "workload": "name: chat\nprompt_tokens: 100\noutput_tokens: 10\nconcurrency: 1\n",
    "contexts": "contexts:\n  a:\n    server: http://127.0.0.1:9\n    fleet: f.yaml\ncurrent-context: a\n",
    "project": "project: demo\n",
}
LOADERS = {"fleet": load_fleet, "workload": load_workload, "contexts": load_contexts, "project": read_project_file}


@st.composite
def hostile(draw) -> tuple[str, str]:
    kind = draw(st.sampled_from(sorted(SEEDS)))
    text = SEEDS[kind]
    for _ in range(draw(st.integers(1, 5))):
        where = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:where] + draw(st.sampled_from(PIECES)) + text[where:]
        else:
            text = text[:where] + text[where + draw(st.integers(1, 8)):]
    return kind, text


@settings(max_examples=150, deadline=2000, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hostile())
def test_a_settings_file_is_its_value_or_one_error_line(tmp_path_factory, case):
    kind, text = case
    path = tmp_path_factory.mktemp(kind) / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        LOADERS[kind](path if kind == "contexts" else str(path))
    except GsgError as error:
        line = str(error)
        assert line and "\n" not in line and "Traceback" not in line
        assert error.where is None or str(error.where).startswith(str(path.name)) or path.name in str(error.where)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40))
def test_the_node_bound_is_never_below_what_composes(pieces):
    text = "".join(pieces)
    try:
        roots = list(yaml.compose_all(text, Loader=Y._Loader))
    except yaml.YAMLError:
        return
    seen: set[int] = set()
    pending = [r for r in roots if r is not None]
    while pending:  # distinct nodes: an alias is the node it names
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            pending.extend(part for pair in node.value for part in pair)
    assert len(seen) <= Y.node_bound(text), text
