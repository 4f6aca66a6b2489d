"""Frozen, validated records on pydantic-core, without `pydantic.BaseModel`.

Why: materialising BaseModel (pydantic.main, its schema generator, plugin discovery through
importlib.metadata) costs about 65 ms per process, a third of a whole `gsg validate` run
(benchmarks/startup.py). The spec and fleet models use nothing beyond what pydantic-core, pydantic's own
engine, already offers: strict or lax validation, located errors (the same `ValidationError`), defaults,
`extra="forbid"`, and serialisation with `exclude_unset`. So a record declares its fields as annotations
(with `field(...)` for constraints) and this module builds the pydantic-core schema from them once, on
first use. The JSON Schema is still produced by pydantic's generator from that same core schema. The schema
is built as the plain dicts pydantic-core reads, not with `pydantic_core.core_schema`'s builders: importing
that module is most of pydantic-core's import cost (core/record_engine.py).
"""

from __future__ import annotations

import sys
import types
import typing
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Literal, Union

from .record_engine import PydanticUndefined, SchemaSerializer, SchemaValidator

if TYPE_CHECKING:
    from pydantic_core import core_schema as cs

REQUIRED: Any = PydanticUndefined
_FLAT = (bool, int, float, str)  # the values Record.flat_dict copies as the serializer would


class Field:
    """One declared field: default (or factory), numeric/length constraints, an optional before-hook."""

    __slots__ = ("annotation", "default", "factory", "before", "constraints")

    def __init__(self, default: Any = REQUIRED, *, factory: Callable[[], Any] | None = None,
                 before: Callable[[Any], Any] | None = None, **constraints: Any):
        self.annotation: Any = None  # resolved when the record's schema is built
        self.default, self.factory, self.before, self.constraints = default, factory, before, constraints

    @property
    def record(self) -> type[Record] | None:
        """The record type inside this field's annotation (through Optional/list/dict), if any."""
        return _inner_record(self.annotation)


def field(default: Any = REQUIRED, *, factory: Callable[[], Any] | None = None,
          before: Callable[[Any], Any] | None = None, **constraints: Any) -> Any:
    """Declare a field's default and constraints (ge, gt, le, lt, min_length, max_length)."""
    return Field(default, factory=factory, before=before, **constraints)


class Record:
    """Base of an immutable record. Subclass keywords: strict=True (no coercion), forbid extra keys always."""

    # The four slots pydantic-core's model validator and serialiser read and write.
    __slots__ = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    record_fields: ClassVar[dict[str, Field]] = {}
    strict_mode: ClassVar[bool] = False  # pydantic strict: no coercion of "2" to 2
    model_config: ClassVar[dict] = {}  # read by pydantic's JSON Schema generator
    if TYPE_CHECKING:
        # Declared for the type checker only: at runtime neither may appear in the annotations, which
        # __init_subclass__ reads as fields and record_schema resolves with typing.get_type_hints.
        _core: ClassVar[tuple[SchemaValidator, SchemaSerializer, cs.CoreSchema] | None]  # per class, by core()
        __pydantic_fields_set__: set[str]  # the slot pydantic-core's validator fills

    def __init_subclass__(cls, strict: bool | None = None, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if strict is not None:
            cls.strict_mode = strict
        own = {}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, REQUIRED)
            own[name] = value if isinstance(value, Field) else Field(value)
            if isinstance(value, Field):
                delattr(cls, name)  # the instance's __dict__ holds the value; no class attribute to shadow
        cls.record_fields = {**cls.record_fields, **own}
        cls.model_config = {"title": cls.__name__, "extra": "forbid"}
        cls._core = None

    def __init__(self, **data: Any):
        type(self).core()[0].validate_python(data, self_instance=self)

    @classmethod
    def validate(cls, data: Any):
        """Validate a mapping into a record; raises pydantic_core.ValidationError with located errors."""
        return cls.core()[0].validate_python(data)

    @classmethod
    def core(cls) -> tuple[SchemaValidator, SchemaSerializer, cs.CoreSchema]:
        core = cls.__dict__.get("_core")  # this class's own, not a base record's
        if core is None:
            schema = record_schema(cls)
            core = cls._core = (SchemaValidator(schema), SchemaSerializer(schema), schema)
        return core

    @property
    def fields_set(self) -> frozenset[str]:
        """Fields the input gave explicitly (defaults excluded)."""
        return frozenset(self.__pydantic_fields_set__)

    def to_dict(self, *, mode: Literal["python", "json"] = "python", exclude: set[str] | None = None,
                exclude_unset: bool = False, exclude_none: bool = False) -> dict[str, Any]:
        flat = self._flat()
        if flat is None:
            return type(self).core()[1].to_python(self, mode=mode, exclude=exclude, exclude_unset=exclude_unset,
                                                  exclude_none=exclude_none)
        # plain values serialise to themselves in both modes: the serializer's dict, without its first call's
        # imports (uuid, platform and pydantic-core's Python package: core/record_engine.py)
        if exclude or exclude_unset or exclude_none:
            kept = self.__pydantic_fields_set__ if exclude_unset else flat
            flat = {name: value for name, value in flat.items()
                    if name in kept and not (exclude and name in exclude) and not (exclude_none and value is None)}
        return flat

    def flat_dict(self) -> dict[str, Any]:
        """to_dict() of a record whose values are all None, bool, int, float, str or lists of those, refused for
        any other: the serializer's first call in a process imports uuid, platform and pydantic-core's Python
        package (~36 M + ~155 M instructions, ~2 % + ~11 % of a 1,000-spec validate run; docs/performance.md,
        twentieth and twenty-first rounds)."""
        flat = self._flat()
        if flat is None:
            raise TypeError(f"{type(self).__name__} holds more than plain values: use to_dict()")
        return flat

    def _flat(self) -> dict[str, Any] | None:
        """The fields as a new dict (lists copied) when every value is plain, else None."""
        flat = {}
        for name, value in self.__dict__.items():
            if isinstance(value, list):
                if not all(item is None or type(item) in _FLAT for item in value):
                    return None
                value = list(value)
            elif value is not None and type(value) not in _FLAT:
                return None
            flat[name] = value
        return flat

    def to_json(self) -> str:
        return type(self).core()[1].to_json(self).decode()

    def replace(self, **changes: Any):
        """A copy with some fields replaced (values taken as given, already valid)."""
        unknown = set(changes) - set(self.record_fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        clone = object.__new__(type(self))
        object.__setattr__(clone, "__dict__", {**self.__dict__, **changes})
        object.__setattr__(clone, "__pydantic_fields_set__", set(self.__pydantic_fields_set__) | set(changes))
        object.__setattr__(clone, "__pydantic_extra__", None)
        object.__setattr__(clone, "__pydantic_private__", None)
        return clone

    def __setattr__(self, name: str, value: Any):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __hash__(self) -> int:
        values = tuple(self.__dict__.values())
        try:  # no list or dict field (a spec's Policy, hashed per spec by the estimate memo): the same hash as
            return hash((type(self), values))  # below, as _hashable leaves such values as they are (2.4 -> 0.4 us)
        except TypeError:
            return hash((type(self), tuple(_hashable(v) for v in values)))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({body})"


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars); several times faster than copy.deepcopy."""
    # Scalars are taken as they are without a call each: an estimate's `extra` is ~77 values of which ~65 are
    # scalars, copied per memory finding (10,000 specs: 2,250 GSG033 findings, ~21 -> ~17.5 us a copy; benchmarks/
    # scale.py, docs/performance.md ninth round). The same copy as calling copy_json on every item.
    if isinstance(value, dict):
        return {key: copy_json(item) if isinstance(item, _CONTAINERS) else item for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) if isinstance(item, _CONTAINERS) else item for item in value]
    return value


_CONTAINERS = (dict, list)


def copy_plan(value: dict) -> tuple[tuple[Any, Callable[[Any], Any]], ...]:
    """How to copy_json a dict whose values are never changed afterwards, worked out once: each key whose value is a
    container, with `dict`/`list` when that value holds no container itself (a copy in C), else copy_json. An
    estimate's `extra` (~53 values, 9 containers) is copied per memory finding: 10,000 specs, 2,250 GSG033
    findings, ~17 -> ~7 us a copy (docs/performance.md, fourteenth round)."""
    plan: list[tuple[Any, Callable[[Any], Any]]] = []
    for key, item in value.items():
        if isinstance(item, dict):
            flat = not any(isinstance(inner, _CONTAINERS) for inner in item.values())
            plan.append((key, dict if flat else copy_json))
        elif isinstance(item, list):
            plan.append((key, list if not any(isinstance(inner, _CONTAINERS) for inner in item) else copy_json))
    return tuple(plan)


def copy_planned(value: dict, plan: tuple[tuple[Any, Callable[[Any], Any]], ...]) -> dict:
    """copy_json(value) by its copy_plan: the same keys in the same order, containers of its own at every depth."""
    copied = dict(value)
    for key, copy in plan:
        copied[key] = copy(value[key])
    return copied


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):  # unordered, as dicts compare: equal records hash equal, whatever the key order
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    return value


# --- annotations -> pydantic-core schema ------------------------------------------------------------------

def _schema(kind: str, **keys: Any) -> cs.CoreSchema:
    """A pydantic-core schema dict as `core_schema`'s builders make it: the type, then the keys that are not None
    (tests/core/test_records.py holds each kind used here against the builder of the same name)."""
    schema: dict[str, Any] = {"type": kind}
    schema.update((key, value) for key, value in keys.items() if value is not None)
    return schema


def _finite_float_schema(**constraints: Any) -> cs.CoreSchema:
    """Every float field is finite: YAML's .nan / .inf are never a meaningful setting."""
    return _schema("float", allow_inf_nan=False, **constraints)


_SCALARS: dict[Any, Callable[..., cs.CoreSchema]] = {
    str: lambda **constraints: _schema("str", **constraints),
    int: lambda **constraints: _schema("int", **constraints),
    float: _finite_float_schema,
    bool: lambda **constraints: _schema("bool", **constraints),
}


def _with_default(schema: cs.CoreSchema, **keys: Any) -> cs.CoreSchema:
    """core_schema.with_default_schema: a `default` of None is kept (it is the default), a factory is not None."""
    return {"type": "default", "schema": schema, **keys}


# (module, annotation text) -> the type it names. Records repeat a few annotations ("str | None", "list[str]")
# many times; typing.get_type_hints compiles each occurrence anew (~2.5 ms of a quickstart run).
_ANNOTATIONS: dict[tuple[str, str], Any] = {}


def _type_hints(cls: type[Record]) -> dict[str, Any]:
    """The record's field annotations resolved in their modules' globals, as typing.get_type_hints does for a
    class, each distinct text evaluated once per process; get_type_hints itself for anything unusual (a name
    only the class body defines, a quoted forward reference inside)."""
    hints: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        module = sys.modules.get(base.__module__)
        for name, annotation in base.__dict__.get("__annotations__", {}).items():
            if not isinstance(annotation, str):
                hints[name] = annotation
                continue
            key = (base.__module__, annotation)
            if key not in _ANNOTATIONS:
                try:
                    value = eval(annotation, vars(module) if module else {})  # noqa: S307 - our own source text
                except NameError:
                    return _get_type_hints(cls)
                if _has_forward_reference(value):
                    return _get_type_hints(cls)
                _ANNOTATIONS[key] = type(None) if value is None else value
            hints[name] = _ANNOTATIONS[key]
    return hints


def _get_type_hints(cls: type[Record]) -> dict[str, Any]:
    """typing.get_type_hints, with quoted names inside generic aliases resolved too: Python 3.10 leaves
    `list['Inner']` as list[ForwardRef] (3.11 resolves it)."""
    hints = typing.get_type_hints(cls)
    namespace = {**vars(sys.modules[cls.__module__]), **dict(vars(cls))} if cls.__module__ in sys.modules \
        else dict(vars(cls))
    return {name: _resolved(value, namespace) for name, value in hints.items()}


def _resolved(value: Any, namespace: dict[str, Any]) -> Any:
    if isinstance(value, typing.ForwardRef):
        value = value.__forward_arg__
    if isinstance(value, str):
        return _resolved(eval(value, namespace), namespace)  # noqa: S307 - an annotation of our own source
    args = typing.get_args(value)
    if not args or typing.get_origin(value) is Literal:
        return value
    resolved = tuple(_resolved(arg, namespace) for arg in args)
    if resolved == args:
        return value
    origin = typing.get_origin(value)
    if origin is typing.Union or isinstance(value, types.UnionType):
        return typing.Union[resolved]  # noqa: UP007 - rebuilt from a tuple of arguments
    return origin[resolved] if isinstance(value, types.GenericAlias) else value.copy_with(resolved)


def _has_forward_reference(value: Any) -> bool:
    if isinstance(value, (str, typing.ForwardRef)):
        return True
    if typing.get_origin(value) is Literal:  # its arguments are values, not types
        return False
    return any(_has_forward_reference(arg) for arg in typing.get_args(value))


def record_schema(cls: type[Record]) -> cs.CoreSchema:
    hints = _type_hints(cls)
    fields = {}
    for name, declared in cls.record_fields.items():
        declared.annotation = hints[name]
        schema = type_schema(declared.annotation, declared.constraints)
        if declared.before is not None:
            schema = _schema("function-before", function={"type": "no-info", "function": declared.before},
                             schema=schema)
        if isinstance(declared.factory, type) and issubclass(declared.factory, Record):
            # Records are immutable: one shared empty record instead of validating {} for every document.
            # (A factory, not a default, so the JSON Schema leaves it out as before.)
            shared = declared.factory()
            schema = _with_default(schema, default_factory=lambda shared=shared: shared)
        elif declared.factory is not None:
            schema = _with_default(schema, default_factory=declared.factory)
        elif declared.default is not REQUIRED:
            schema = _with_default(schema, default=declared.default)
        fields[name] = _schema("model-field", schema=schema)
    config = {"title": cls.__name__, "strict": cls.strict_mode, "extra_fields_behavior": "forbid"}
    body = _schema("model-fields", fields=fields, model_name=cls.__name__, extra_behavior="forbid")
    return _schema("model", cls=cls, schema=body, config=config, ref=f"{cls.__module__}.{cls.__qualname__}")


def type_schema(annotation: Any, constraints: dict[str, Any]) -> cs.CoreSchema:
    """Constraints apply to the innermost value, as pydantic applies Field(ge=...) inside Optional."""
    if annotation is Any:
        return _schema("any")
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = typing.get_args(annotation)
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(args) != 2:
            raise TypeError(f"only Optional[X] unions are supported, not {annotation}")
        return _schema("nullable", schema=type_schema(rest[0], constraints))
    if origin is Literal:
        return _schema("literal", expected=list(typing.get_args(annotation)))
    if origin is list:
        (item,) = typing.get_args(annotation)
        return _schema("list", items_schema=type_schema(item, {}), **constraints)
    if origin is dict:
        key, value = typing.get_args(annotation)
        return _schema("dict", keys_schema=type_schema(key, {}), values_schema=type_schema(value, {}), **constraints)
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation.core()[2]
    if annotation in _SCALARS:
        return _SCALARS[annotation](**constraints)
    raise TypeError(f"no schema for annotation {annotation!r}")


def _inner_record(annotation: Any) -> type[Record] | None:
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_record(arg)
        if found is not None:
            return found
    return None

