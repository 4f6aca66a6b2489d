"""`@frozen_value`: what `@dataclass(frozen=True, eq=False, repr=False)` makes of a class, for a third of the cost.

Why: on Python 3.10 to 3.12, `@dataclass` compiles each generated method with its own `exec` when the class is
defined: `__init__`, and for a frozen class `__setattr__` and `__delattr__` too (~3.2 M instructions for a class of
eight fields; the ~55 such value types `gsg validate` imports were ~9 % of validating 1,000 specs,
docs/performance.md, twentieth round). Here the two refusing methods are shared by every class, and `__init__` is
compiled on the class's first instantiation, so a class a run never builds costs no compile at all.

The class stays a dataclass to `dataclasses.fields`, `replace`, `asdict` and `is_dataclass`: its
`__dataclass_fields__` holds the Field objects `@dataclass` would make, and its `__init__` has the same parameters,
defaults and default factories, then calls `__post_init__` when the class has one. Equality and hash stay
identity, and `__repr__` is the class's own (`core.dataclass_repr.fields_repr` where it sets one). What this does
not build is refused when the class is defined: a dataclass base, `InitVar`, `field(init=False)`, `kw_only`, a field
without a default after one with a default, and (as `@dataclass` refuses it) a mutable default.
"""

from __future__ import annotations

import dataclasses
import sys
from types import SimpleNamespace
from typing import Any, Callable, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10 (typing-extensions, a dependency there)
    from typing_extensions import dataclass_transform

_Cls = TypeVar("_Cls", bound=type)
_MISSING: Any = dataclasses.MISSING


def _refuse_assignment(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_deletion(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _class_variable(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


def _init_variable(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("InitVar", "dataclasses.InitVar"))


@dataclass_transform(frozen_default=True, eq_default=False, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen_value(cls: Any = None, /, *, eq: bool = False, repr: bool = False) -> Any:
    """Make a class a frozen value type (module docstring); the class itself is returned, as `@dataclass` does.
    `eq=True` adds field-wise `__eq__` and `__hash__` (compiled on first use, as `@dataclass(frozen=True)` writes
    them), `repr=True` the shared `fields_repr`; a method the class defines itself is kept, as `@dataclass` keeps it."""
    if cls is None:
        return lambda bare: _build(bare, eq, repr)
    return _build(cls, eq, repr)


def _build(cls: _Cls, eq: bool, shown: bool) -> _Cls:
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: @frozen_value does not extend a dataclass; use @dataclass")
    own = dict(cls.__dict__)
    fields: dict[str, dataclasses.Field] = {}
    seen_default = False
    for name, annotation in own.get("__annotations__", {}).items():
        if _class_variable(annotation):
            continue
        if _init_variable(annotation):
            raise TypeError(f"{cls.__qualname__}.{name}: @frozen_value takes no InitVar; use @dataclass")
        declared = own.get(name, _MISSING)
        made = declared if isinstance(declared, dataclasses.Field) else dataclasses.field(default=declared)
        if not made.init or made.kw_only is True:
            raise TypeError(f"{cls.__qualname__}.{name}: @frozen_value takes no init=False or kw_only field")
        made.name, made.type, made.kw_only = name, annotation, False  # kw_only as @dataclass settles it
        made._field_type = dataclasses._FIELD  # type: ignore[union-attr, attr-defined]  # what fields() reads
        if made.default is not _MISSING and made.default.__class__.__hash__ is None:  # a list, dict or set
            raise ValueError(f"mutable default {type(made.default)} for field {name} is not allowed: use "
                             "default_factory")  # as @dataclass refuses it: every instance would share it
        has_default = made.default is not _MISSING or made.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        seen_default = seen_default or has_default
        if isinstance(declared, dataclasses.Field):  # as @dataclass leaves it: the default itself, or nothing
            if made.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, made.default)
        fields[name] = made
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    cls.__match_args__ = tuple(fields)  # type: ignore[attr-defined, misc]
    # what a @dataclass extending this class reads of its base (frozen bases only extend into frozen classes)
    cls.__dataclass_params__ = SimpleNamespace(  # type: ignore[attr-defined]
        init=True, repr=shown, eq=eq, order=False, unsafe_hash=False, frozen=True, match_args=True, kw_only=False,
        slots=False, weakref_slot=False)
    cls.__setattr__ = _refuse_assignment  # type: ignore[assignment, method-assign]
    cls.__delattr__ = _refuse_deletion  # type: ignore[assignment, method-assign]
    _on_first_use(cls, "__init__", lambda: _compiled_init(cls, fields))
    if eq:
        compared = [name for name, made in fields.items() if made.compare]
        hashed = [name for name, made in fields.items() if made.hash or (made.hash is None and made.compare)]
        if "__eq__" not in own:
            _on_first_use(cls, "__eq__", lambda: _compiled_eq(cls, compared))
        # @dataclass(eq=True, frozen=True) writes __hash__ unless the class has its own (a bare `__eq__` in the body
        # leaves Python's implicit `__hash__ = None`, which is not the class's own)
        if "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own):
            _on_first_use(cls, "__hash__", lambda: _compiled_hash(cls, hashed))
    if shown and "__repr__" not in own:
        from gpustack_guard.core.dataclass_repr import fields_repr

        cls.__repr__ = fields_repr  # type: ignore[assignment, method-assign]
    return cls


def _on_first_use(cls: type, method: str, compile_method: Callable[[], Callable[..., Any]]) -> None:
    """A stand-in that compiles the method on its first call, installs it on the class, and answers that call."""
    def stand_in(self: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = compile_method()
        setattr(cls, method, compiled)  # type.__setattr__: the class, not its instances, refuses assignment
        return compiled(self, *args, **kwargs)

    stand_in.__qualname__ = f"{cls.__qualname__}.{method}"
    setattr(cls, method, stand_in)


def _compiled(cls: type, method: str, source: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    exec(source, namespace)  # noqa: S102 - the text is made here from the class's own field names
    made = namespace[method]
    made.__qualname__ = f"{cls.__qualname__}.{method}"
    return made


def _compiled_eq(cls: type, names: list[str]) -> Callable[..., Any]:
    mine = "".join(f"__self.{name}," for name in names)
    theirs = "".join(f"other.{name}," for name in names)
    source = (f"def __eq__(__self, other):\n    if other.__class__ is __self.__class__:\n"
              f"        return ({mine}) == ({theirs})\n    return NotImplemented\n")
    return _compiled(cls, "__eq__", source, {})


def _compiled_hash(cls: type, names: list[str]) -> Callable[..., Any]:
    values = "".join(f"__self.{name}," for name in names)
    return _compiled(cls, "__hash__", f"def __hash__(__self):\n    return hash(({values}))\n", {})


def _compiled_init(cls: type, fields: dict[str, dataclasses.Field]) -> Callable[..., None]:
    """The `__init__` `@dataclass` would write for these fields: each one set with object.__setattr__ (the class
    refuses assignment), a default factory called when its parameter was not given."""
    namespace: dict[str, Any] = {"__set": object.__setattr__, "__MISSING": _MISSING}
    parameters, lines = [], []
    for index, (name, made) in enumerate(fields.items()):
        if made.default_factory is not _MISSING:
            namespace[f"__factory{index}"] = made.default_factory
            parameters.append(f"{name}=__MISSING")
            lines.append(f"__set(__self, {name!r}, __factory{index}() if {name} is __MISSING else {name})")
        else:
            if made.default is not _MISSING:
                namespace[f"__default{index}"] = made.default
                parameters.append(f"{name}=__default{index}")
            else:
                parameters.append(name)
            lines.append(f"__set(__self, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        lines.append("__self.__post_init__()")
    source = f"def __init__(__self, {', '.join(parameters)}):\n    " + "\n    ".join(lines or ["pass"]) + "\n"
    return _compiled(cls, "__init__", source, namespace)
