"""The tree is the architecture: core/ does no I/O and imports no edge; the import graph has no cycle.

Read from the source with `ast`, so function-local imports (the usual way to hide a cycle) count too;
imports under `if TYPE_CHECKING:` do not, as they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "gpustack_guard"
EDGE_PACKAGES = ("gpustack_guard.adapters", "gpustack_guard.commands", "gpustack_guard.reporters",
                 "gpustack_guard.cli", "gpustack_guard.wiring", "gpustack_guard.__main__", "gpustack_guard.console")
# What a pure module may not touch: the network, the file system, processes, template and YAML engines.
IO_MODULES = ("httpx", "socket", "ssl", "urllib", "http", "os", "pathlib", "shutil", "tempfile", "io",
              "subprocess", "yaml", "jinja2", "sqlite3", "asyncio")
IO_BUILTINS = ("open", "input", "print")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(path: Path, me: str | None = None) -> list[tuple[str, int]]:
    """Every module a file imports at run time (absolute names), with the line; `me` names a file kept elsewhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for block in ast.walk(tree) if _type_checking_block(block) for n in ast.walk(block)}
    me = me or module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.append((base, node.lineno))
            # `from pkg import module` imports pkg.module when that is a module of ours
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if _is_our_module(candidate):
                    found.append((candidate, node.lineno))
    return found


def _is_our_module(name: str) -> bool:
    if not name.startswith("gpustack_guard"):
        return False
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (PACKAGE.parent / rel / "__init__.py").is_file()


def _sources(under: str = "") -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


CORE_FILES = _sources("core")


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_imports_no_edge_and_no_io(path: Path):
    bad = [f"line {line}: {name}" for name, line in imports_of(path)
           if name.startswith(EDGE_PACKAGES) or name.split(".")[0] in IO_MODULES]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad += [f"line {n.lineno}: {n.func.id}()" for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in IO_BUILTINS]
    assert bad == []


def test_the_core_is_really_checked():
    """The parametrised test above must see the core (an empty glob would pass everything)."""
    names = {module_name(p) for p in CORE_FILES}
    assert {"gpustack_guard.core.spec.model", "gpustack_guard.core.memory.engine",
            "gpustack_guard.core.deploy.plan", "gpustack_guard.core.rules"} <= names


def test_a_forbidden_import_is_caught(tmp_path: Path):
    # outside the package: a probe inside it races the graph test of another xdist worker, which globs the package
    sample = tmp_path / "_probe_for_test.py"
    sample.write_text("def f():\n    import httpx\n    from gpustack_guard.adapters import templates\n")
    names = [name for name, _ in imports_of(sample, me="gpustack_guard.core._probe_for_test")]
    assert names == ["httpx", "gpustack_guard.adapters", "gpustack_guard.adapters.templates"]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _sources():
        me = module_name(path)
        graph[me] = {name for name, _ in imports_of(path) if _is_our_module(name) and name != me}
    return graph


def _parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a path, or []. A package's __init__ importing its own submodules is no cycle."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in _parents(node) or node in _parents(nxt):
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def test_import_graph_is_acyclic():
    assert find_cycle(_graph()) == []


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_few_modules_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py", "wiring.py"]
