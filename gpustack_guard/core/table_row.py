"""`TableRow`: the row type of gsg's version tables, what `typing.NamedTuple` makes of a class for half the cost.

Why: `typing.NamedTuple` builds each class through `collections.namedtuple`, which compiles a `__new__` with
`eval` and formats a docstring per field: ~1.1 M instructions a class of six fields against ~0.6 M here, and
`gsg validate` imports ~70 row classes (profiles.py's tables alone: ~69 M of a 1,000-spec run's ~1,344 M;
docs/performance.md, twenty-first round). A row is still a tuple (equality, hash, order, unpacking, indexing and
JSON are the tuple's), its fields are read through the same C accessor namedtuple uses, and `_fields`,
`_field_defaults`, `_make`, `_replace`, `_asdict` and the repr are NamedTuple's. Arguments are bound by one shared
`__new__` instead of a compiled one per class: rows are built once, when their table is.

Declared as `class Row(TableRow):` with annotated fields, defaults last, as for NamedTuple; methods and docstrings
are kept. Refused when the class is defined, as NamedTuple refuses them: a field without a default after one with
a default, a field name starting with an underscore, and a subclass of a row class adding fields.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar, Iterable, TypeVar

try:  # the accessor collections.namedtuple itself uses (a C descriptor); a property where it is absent
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Python implementations
    def _tuplegetter(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)


class TableRow(tuple):
    """Base of a table row (module docstring)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _field_defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__dict__.get("__annotations__", {}))
        if not names:
            return  # a subclass that only adds methods keeps its base's fields
        if cls._fields:
            raise TypeError(f"{cls.__qualname__}: a row class cannot add fields to {cls.__mro__[1].__qualname__}")
        defaults: dict[str, Any] = {}
        for index, name in enumerate(names):
            if name.startswith("_"):
                raise TypeError(f"{cls.__qualname__}: field names cannot start with an underscore: {name!r}")
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
            elif defaults:
                raise TypeError(f"{cls.__qualname__}: non-default field {name!r} cannot follow default field(s) "
                                f"{', '.join(defaults)}")
            setattr(cls, name, _tuplegetter(index, f"Alias for field number {index}"))
        cls._fields, cls._field_defaults = names, defaults
        setattr(cls, "__match_args__", names)  # noqa: B010 - typeshed's tuple declares it read-only for mypy

    def __new__(cls: type[_Row], *args: Any, **kwargs: Any) -> _Row:
        fields = cls._fields
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} positional arguments but {len(args)} were given")
        if len(args) == len(fields) and not kwargs:
            return tuple.__new__(cls, args)
        values = list(args)
        defaults = cls._field_defaults
        for name in fields[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in defaults:
                values.append(defaults[name])
            else:
                raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
        if kwargs:
            name = next(iter(kwargs))
            problem = "multiple values for argument" if name in fields else "an unexpected keyword argument"
            raise TypeError(f"{cls.__name__}() got {problem} {name!r}")
        return tuple.__new__(cls, values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is a table row: {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is a table row: {name!r} cannot be deleted")

    @classmethod
    def _make(cls: type[_Row], iterable: Iterable[Any]) -> _Row:
        row = tuple.__new__(cls, iterable)
        if len(row) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(row)}")
        return row

    def _replace(self: _Row, **changes: Any) -> _Row:
        row = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return row

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self))

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self))})"


_Row = TypeVar("_Row", bound=TableRow)  # a row class itself, for what _make and _replace return
