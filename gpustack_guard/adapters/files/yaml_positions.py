"""YAML documents with the line and column of every key and value.

PyYAML (with libyaml when present) composes the node graph; we build plain Python values from it and
remember where each path came from, so every later finding can name file:line:column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # libyaml is several times faster; the pure-Python loader gives the same nodes
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

Path = tuple  # tuple[str | int, ...]


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int):
        self.line, self.column = line, column
        super().__init__(message)


@dataclass
class LocatedDocument:
    """One YAML document: its data plus the node tree, which answers 1-based (line, column) of any path.

    Positions are looked up on demand (only findings need them), so loading costs little more than parsing.
    """

    data: Any
    start_line: int
    root: Any = None  # the composed yaml.Node
    duplicate_keys: list[tuple[Path, int, int]] = field(default_factory=list)

    def position(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Where `path` is, or its nearest ancestor that exists (a missing field points at its parent)."""
        node = self.root
        if node is None:
            return self.start_line, 1
        for depth, part in enumerate(path):
            if isinstance(node, yaml.MappingNode):
                match = None
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and _scalar(key_node) == part:
                        match = (key_node, value_node)  # the last duplicate wins, as in the data
                if match is None:
                    break
                node = match[0] if (key and depth == len(path) - 1) else match[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
            else:
                break
        return _mark(node)


_constructor = yaml.constructor.SafeConstructor()
_STR = "tag:yaml.org,2002:str"


def _scalar(node: yaml.ScalarNode) -> Any:
    if node.tag == _STR:  # most values: skip the constructor's generic dispatch
        return node.value
    return _constructor.construct_object(node, deep=True)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _build(node: yaml.Node, path: Path, doc: LocatedDocument, active: set[int]) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if id(node) in active:
        raise YamlSyntaxError("recursive alias", *_mark(node))
    active.add(id(node))
    try:
        if isinstance(node, yaml.SequenceNode):
            return [_build(child, path + (i,), doc, active) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            _constructor.flatten_mapping(node)  # YAML merge keys (<<)
            result: dict = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise YamlSyntaxError("a mapping key must be a plain value", *_mark(key_node))
                key = _scalar(key_node)
                if isinstance(key, (list, dict)):
                    raise YamlSyntaxError("a mapping key must be a plain value", *_mark(key_node))
                if key in result:
                    doc.duplicate_keys.append((path + (key,), *_mark(key_node)))
                result[key] = _build(value_node, path + (key,), doc, active)
            return result
    finally:
        active.discard(id(node))
    raise YamlSyntaxError(f"unsupported YAML node {type(node).__name__}", *_mark(node))  # pragma: no cover


def load_documents(text: str) -> list[LocatedDocument]:
    """All documents of a YAML stream; empty documents are skipped. Raises YamlSyntaxError."""
    documents: list[LocatedDocument] = []
    try:
        for node in yaml.compose_all(text, Loader=_Loader):
            if node is None or (isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null") and not node.value):
                continue  # an empty document between two '---' lines
            doc = LocatedDocument(data=None, start_line=node.start_mark.line + 1, root=node)
            doc.data = _build(node, (), doc, set())
            documents.append(doc)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlSyntaxError(problem, line, column) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(str(exc).splitlines()[0], 1, 1) from None
    except (ValueError, TypeError) as exc:  # e.g. an invalid timestamp scalar
        raise YamlSyntaxError(str(exc), 1, 1) from None
    return documents
