"""The shared `__repr__` prints what `@dataclass(repr=True)` generates, and no dataclass of gsg lost its repr."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass, field

import gpustack_guard
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.findings import Location


@dataclass(frozen=True, repr=False)
class Shared:
    """Fields of every kind a repr treats differently: hidden, defaulted, nested, a string to quote."""

    __repr__ = fields_repr

    name: str
    hidden: str = field(default="hf_secret", repr=False)
    sizes: tuple[int, ...] = (1, 2)
    inner: object = None
    uncompared: int = field(default=7, compare=False)


@dataclass(frozen=True)
class Generated:
    """The same fields, with the repr dataclasses writes."""

    name: str
    hidden: str = field(default="hf_secret", repr=False)
    sizes: tuple[int, ...] = (1, 2)
    inner: object = None
    uncompared: int = field(default=7, compare=False)


@dataclass(eq=False, repr=False)
class Node:
    """A mutable record that can hold itself."""

    __repr__ = fields_repr

    label: str
    child: object = None


@dataclass(eq=False)
class GeneratedNode:
    """The same, generated."""

    label: str
    child: object = None


def test_the_shared_repr_writes_the_generated_text():
    for args in [("a",), ("it's \"q\"", "hf_other", (), Location("x.yaml", 3, 4), 0)]:
        shared, generated = repr(Shared(*args)), repr(Generated(*args))
        assert shared == generated.replace("Generated(", "Shared(")
    assert repr(Shared("a")) == "Shared(name='a', sizes=(1, 2), inner=None, uncompared=7)"
    assert repr(Location("specs/a.yaml", 12, 5)) == "Location(file='specs/a.yaml', line=12, column=5)"


def test_a_record_inside_itself_is_dotted_as_dataclasses_do():
    shared, generated = Node("top"), GeneratedNode("top")
    shared.child, generated.child = Node("leaf", shared), GeneratedNode("leaf", generated)
    assert repr(shared) == repr(generated).replace("GeneratedNode(", "Node(")
    assert repr(shared) == "Node(label='top', child=Node(label='leaf', child=...))"


def test_every_dataclass_of_gsg_prints_its_fields():
    """repr=False without `__repr__ = fields_repr` (or a repr of its own) would print `<X object at 0x...>`."""
    modules = [importlib.import_module(info.name)
               for info in pkgutil.walk_packages(gpustack_guard.__path__, "gpustack_guard.")
               if not info.name.endswith("__main__")]
    classes = {obj for module in modules for obj in vars(module).values()
               if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__}
    assert len(classes) > 100
    silent = sorted(c.__qualname__ for c in classes
                    if not c.__dataclass_params__.repr and "__repr__" not in vars(c))  # type: ignore[attr-defined]
    assert silent == []
    shared = {c.__qualname__ for c in classes if vars(c).get("__repr__") is fields_repr}
    assert {"Finding", "ModelFacts", "Evaluation", "VllmProfile"} <= shared
