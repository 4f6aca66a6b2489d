"""@frozen_value builds what @dataclass(frozen=True, eq=False, repr=False) builds, for the shapes gsg's value types
have; what it does not build is refused when the class is defined."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from gpustack_guard.core.values import frozen_value


def shapes(decorate):
    @decorate
    class Point:
        """A value type with every supported kind of field."""

        kind: ClassVar[str] = "point"
        x: int
        y: int = 2
        tags: list = field(default_factory=list)
        label: str = field(default="p", repr=False)

        def __post_init__(self):
            object.__setattr__(self, "made", True)

    return Point


OURS, THEIRS = shapes(frozen_value), shapes(lambda cls: dataclass(frozen=True, eq=False, repr=False)(cls))


@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, 5), {}), ((1,), {"tags": ["a"]}), ((), {"x": 3, "label": "q"}),
                                          ((1, 2, [3], "r"), {})])
def test_the_same_values_fields_replace_and_asdict(args, kwargs):
    ours, theirs = OURS(*args, **kwargs), THEIRS(*args, **kwargs)
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs) and ours.made and theirs.made
    assert [(f.name, f.type, f.repr, f.default) for f in dataclasses.fields(ours)] == \
        [(f.name, f.type, f.repr, f.default) for f in dataclasses.fields(theirs)]
    assert dataclasses.asdict(dataclasses.replace(ours, y=9)) == dataclasses.asdict(dataclasses.replace(theirs, y=9))
    assert dataclasses.is_dataclass(ours) and ours.kind == "point" and OURS.y == THEIRS.y == 2
    assert not hasattr(OURS, "tags") and not hasattr(THEIRS, "tags") and OURS.label == THEIRS.label == "p"


def test_frozen_identity_equality_and_fresh_factories():
    a, b = OURS(1), OURS(1)
    assert a != b and a == a and hash(a) == object.__hash__(a)
    assert a.tags is not b.tags
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        del a.y
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.other = 1


@pytest.mark.parametrize("args, kwargs", [((), {}), ((1,), {"z": 1}), ((1, 2, 3, 4, 5), {}), ((1,), {"x": 2})])
def test_wrong_arguments_fail_as_with_dataclass(args, kwargs):
    with pytest.raises(TypeError) as theirs:
        THEIRS(*args, **kwargs)
    with pytest.raises(TypeError) as ours:
        OURS(*args, **kwargs)
    assert str(ours.value).split("() ", 1)[-1] == str(theirs.value).split("() ", 1)[-1]


def test_what_it_does_not_build_is_refused_at_definition():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @frozen_value
        class Order:
            a: int = 1
            b: int
    with pytest.raises(TypeError, match="no init=False or kw_only"):
        @frozen_value
        class Hidden:
            a: int = field(default=1, init=False)
    for mutable in ([], {}, set()):
        with pytest.raises(ValueError, match="mutable default .* use default_factory"):
            frozen_value(type("Shared", (), {"__annotations__": {"items": "list"}, "items": mutable}))
    with pytest.raises(TypeError, match="does not extend a dataclass"):
        @frozen_value
        class Child(THEIRS):
            z: int = 0


def test_gsg_value_types_are_built_by_frozen_value():
    """A sample of the value types on validate's path: frozen, identity-equal, their __init__ compiled on first use."""
    from gpustack_guard.core.deploy.removals import OverlayRemovals as Removals
    from gpustack_guard.core.findings import Finding

    for cls in (Removals, Finding):
        assert cls.__setattr__.__name__ == "_refuse_assignment" and dataclasses.is_dataclass(cls)
    made = Removals()
    assert Removals.__init__.__qualname__ == "OverlayRemovals.__init__" and made.excluded == {} and made != Removals()


def compared(decorate):
    @decorate
    class Pair:
        """Compared by value: a hidden field and one left out of comparison."""

        a: int
        b: tuple = ()
        note: str = field(default="n", compare=False)
        secret: str = field(default="s", repr=False)

    return Pair


EQ_OURS = compared(frozen_value(eq=True, repr=True))
EQ_THEIRS = compared(lambda cls: dataclass(frozen=True)(cls))


def test_eq_hash_and_repr_as_dataclass_frozen_writes_them():
    for args in [(1,), (1, (2, 3)), (1, (), "other"), (2, (), "n", "t")]:
        ours, theirs = EQ_OURS(*args), EQ_THEIRS(*args)
        assert hash(ours) == hash(theirs) and repr(ours) == repr(theirs)
        assert ours == EQ_OURS(*args) and ours != theirs  # another class is never equal, as with dataclass
    assert EQ_OURS(1, (), "x") == EQ_OURS(1, (), "y") and EQ_THEIRS(1, (), "x") == EQ_THEIRS(1, (), "y")
    assert EQ_OURS(1) != EQ_OURS(2) and len({EQ_OURS(1), EQ_OURS(1), EQ_OURS(2)}) == 2
    assert EQ_OURS(1).__eq__(3) is NotImplemented and repr(EQ_OURS(1)).endswith(".Pair(a=1, b=(), note='n')")


def test_a_method_the_class_writes_is_kept():
    @frozen_value(eq=True, repr=True)
    class Own:
        """Writes its own equality and repr."""

        a: int

        def __eq__(self, other):
            return True

        def __repr__(self):
            return "own"

    assert Own(1) == Own(2) and repr(Own(1)) == "own"
    # an own __eq__ leaves Python's implicit `__hash__ = None`, which @dataclass(frozen=True) replaces by its own
    twin = dataclass(frozen=True)(type("Own", (), {"__annotations__": {"a": "int"}, "__eq__": lambda s, o: True}))
    assert hash(Own(1)) == hash(twin(1)) == hash((1,))


def test_a_dataclass_may_extend_a_frozen_value():
    @dataclass(frozen=True)
    class Child(EQ_OURS):
        c: int = 0

    made = Child(1, (), "n", "s", 5)
    assert made.c == 5 and [f.name for f in dataclasses.fields(made)] == ["a", "b", "note", "secret", "c"]


def test_gsg_defines_frozen_classes_with_frozen_value():
    """A new `@dataclass(frozen=True...)` would bring back its execs at import; the one left needs init=False."""
    import re

    from support import REPO

    written = {str(path.relative_to(REPO)): re.findall(r"^\s*@dataclass\(frozen=True[^)]*\)", path.read_text(), re.M)
               for path in (REPO / "gpustack_guard").rglob("*.py")}
    assert {file: found for file, found in written.items() if found} == {
        "gpustack_guard/core/render.py": ["@dataclass(frozen=True, eq=False, repr=False, init=False)"]}
