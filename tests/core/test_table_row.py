"""TableRow against typing.NamedTuple: the same row, built for half the cost (core/table_row.py)."""

import copy
import json
import pickle
from typing import NamedTuple

import pytest

from gpustack_guard.core.table_row import TableRow


class Ours(TableRow):
    """A row."""

    name: str
    size: int = 4
    tags: tuple = ()

    def doubled(self) -> int:
        return self.size * 2


class Theirs(NamedTuple):
    name: str
    size: int = 4
    tags: tuple = ()


_CALLS = [(("a",), {}), (("a", 5), {}), (("a", 5, ("x",)), {}), ((), {"name": "b"}), (("c",), {"tags": (1,)}),
          ((), {"size": 9, "name": "d"})]


@pytest.mark.parametrize("args, kwargs", _CALLS)
def test_construction_values_and_tuple_behaviour_are_namedtuples(args, kwargs):
    ours, theirs = Ours(*args, **kwargs), Theirs(*args, **kwargs)
    assert tuple(ours) == tuple(theirs) and ours == theirs and hash(ours) == hash(theirs)
    assert (ours.name, ours.size, ours.tags) == (theirs.name, theirs.size, theirs.tags)
    assert ours._asdict() == theirs._asdict() and json.dumps(ours) == json.dumps(theirs)
    assert repr(ours).replace("Ours", "Theirs") == repr(theirs)
    assert ours._replace(size=1) == theirs._replace(size=1) and type(ours._replace(size=1)) is Ours
    assert copy.deepcopy(ours) == ours and type(copy.deepcopy(ours)) is Ours
    assert pickle.loads(pickle.dumps(ours)) == ours and type(pickle.loads(pickle.dumps(ours))) is Ours


@pytest.mark.parametrize("args, kwargs", [((), {}), (("a", 1, (), 2), {}), (("a",), {"name": "b"}),
                                          (("a",), {"colour": "red"}), ((), {"size": 1})])
def test_wrong_arguments_are_refused_as_namedtuple_refuses_them(args, kwargs):
    with pytest.raises(TypeError):
        Theirs(*args, **kwargs)
    with pytest.raises(TypeError, match=r"^Ours\(\) "):
        Ours(*args, **kwargs)


def test_class_attributes_and_methods():
    assert Ours._fields == Theirs._fields == ("name", "size", "tags")
    assert Ours._field_defaults == Theirs._field_defaults == {"size": 4, "tags": ()}
    assert Ours.__match_args__ == Theirs.__match_args__ and Ours.__doc__ == "A row."
    assert Ours("a", 3).doubled() == 6 and isinstance(Ours("a"), tuple)
    assert Ours._make(["a", 1, ()]) == ("a", 1, ())
    match Ours("m", 2):
        case Ours(name, size):
            assert (name, size) == ("m", 2)
    with pytest.raises(TypeError, match="Expected 3 arguments, got 2"):
        Ours._make(["a", 1])
    with pytest.raises(ValueError, match="unexpected field names: \\['colour'\\]"):
        Ours("a")._replace(colour="red")


def test_a_row_is_immutable():
    row = Ours("a")
    with pytest.raises(AttributeError):
        row.size = 5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="table row"):
        row.other = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="table row"):
        del row.name  # type: ignore[misc]
    assert row == ("a", 4, ())


def test_declarations_namedtuple_refuses_are_refused():
    with pytest.raises(TypeError, match="non-default field 'b' cannot follow default field"):
        class _Order(TableRow):
            a: int = 1
            b: int
    with pytest.raises(TypeError, match="underscore"):
        class _Private(TableRow):
            _a: int
    with pytest.raises(TypeError, match="cannot add fields"):
        class _More(Ours):
            extra: int = 0


def test_a_subclass_adding_only_methods_keeps_the_fields():
    class Named(Ours):
        def shout(self) -> str:
            return self.name.upper()

    assert Named("x", 1).shout() == "X" and Named._fields == Ours._fields and Named("x").size == 4


def test_the_version_tables_are_rows():
    from gpustack_guard.core.memory import profiles

    rows = [value for value in vars(profiles).values() if isinstance(value, TableRow)]
    tables = [value for value in vars(profiles).values()
              if isinstance(value, tuple) and value and all(isinstance(item, TableRow) for item in value)]
    assert rows or tables
    assert not [name for name, value in vars(profiles).items()
                if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
                and not issubclass(value, TableRow)]
