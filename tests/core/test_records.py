"""Records on pydantic-core: the behaviour the spec and fleet models rely on."""

import subprocess
import sys
from typing import Any, ClassVar, Literal, Optional

import pytest
from pydantic_core import ValidationError
from support.json_walk import containers

from gpustack_guard.core import records
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.records import Record, field
from gpustack_guard.core.spec.model import DeploymentSpec, Policy


def _half(value: Any) -> Any:
    return value // 2 if isinstance(value, int) else value


class Inner(Record, strict=True):
    size: int = field(1, ge=1, le=10)
    kind: Literal["a", "b"] = "a"


class Outer(Record, strict=True):
    """An outer record."""

    name: str = field(min_length=1)
    inner: Inner = field(factory=Inner)
    tags: list[str] = field(factory=list)
    note: Optional[str] = None
    halved: int = field(0, before=_half)
    extra: dict[str, Any] = field(factory=dict)


def errors(data):
    with pytest.raises(ValidationError) as caught:
        Outer.validate(data)
    return [(e["type"], e["loc"]) for e in caught.value.errors(include_url=False)]


def test_defaults_factories_and_before_hook():
    record = Outer.validate({"name": "x", "halved": 9})
    assert record.inner == Inner() and record.inner.size == 1 and record.tags == [] and record.note is None
    assert record.halved == 4
    assert record.fields_set == {"name", "halved"}
    assert Outer.validate({"name": "y"}).tags is not record.tags  # a fresh list per record


def test_strict_extra_forbidden_and_constraints_are_located():
    assert errors({"name": "x", "inner": {"size": "2"}}) == [("int_type", ("inner", "size"))]
    assert errors({"name": "x", "inner": {"size": 11}}) == [("less_than_equal", ("inner", "size"))]
    assert errors({"name": "", "bogus": 1}) == [("string_too_short", ("name",)), ("extra_forbidden", ("bogus",))]
    assert errors({"inner": {"kind": "c"}}) == [("missing", ("name",)), ("literal_error", ("inner", "kind"))]


def test_serialisation_respects_exclude_unset_and_none():
    record = Outer.validate({"name": "x", "inner": {"size": 3}})
    assert record.to_dict(exclude_unset=True) == {"name": "x", "inner": {"size": 3}}
    assert record.to_dict(exclude={"inner", "extra", "tags", "halved"}, exclude_none=True) == {"name": "x"}
    assert record.to_json() == '{"name":"x","inner":{"size":3,"kind":"a"},"tags":[],"note":null,"halved":0,' \
                               '"extra":{}}'


def test_immutable_equal_hashable_and_replace():
    record = Outer.validate({"name": "x"})
    with pytest.raises(AttributeError):
        record.name = "y"
    assert record == Outer.validate({"name": "x"}) and record != Outer.validate({"name": "z"})
    assert hash(record) == hash(Outer.validate({"name": "x"}))
    changed = record.replace(note="n")
    assert (changed.note, record.note, changed.fields_set) == ("n", None, {"name", "note"})
    assert repr(Inner()) == "Inner(size=1, kind='a')"
    with pytest.raises(TypeError):
        record.replace(nme="typo")


def test_class_variables_are_not_fields():
    class WithConstant(Record):
        LIMIT: ClassVar[int] = 3
        size: int = 1

    assert list(WithConstant.record_fields) == ["size"] and WithConstant().size == 1


def test_keyword_construction_validates():
    assert Inner(size=5).size == 5
    with pytest.raises(ValidationError):
        Inner(size=0)


def test_policy_field_named_strict_does_not_clash_with_the_record_option():
    assert Policy(strict=True).strict is True
    assert DeploymentSpec.strict_mode is True and Fleet.strict_mode is False


def test_fleet_is_lax_and_takes_sizes_with_units():
    fleet = Fleet.validate({"clusters": [{"name": "c", "workers": [
        {"name": "w", "gpus": [{"index": 0, "memory": {"total": "24GiB", "used": 1024}}]}]}]})
    assert fleet.clusters[0].workers[0].gpus[0].memory.total == 24 * 1024 ** 3


def test_validate_never_imports_pydantic_basemodel():
    """The start-up budget (benchmarks/startup.py) depends on never materialising pydantic.main."""
    code = ("import sys\nfrom gpustack_guard.core.spec.model import DeploymentSpec\nfrom gpustack_guard.core.fleet.model import Fleet\n"
            "DeploymentSpec.validate({'name': 'a', 'source': 'huggingface', 'huggingface_repo_id': 'x'})\n"
            "Fleet.validate({'clusters': []})\nprint('pydantic.main' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_validate_loads_only_pydantic_cores_compiled_module():
    """core_schema and typing_extensions are most of `import pydantic_core` (~179 M instructions, docs/performance.md
    twenty-first round); validation and its errors need only the compiled module."""
    code = ("import sys\nfrom gpustack_guard.core.spec.model import DeploymentSpec\n"
            "from gpustack_guard.core.record_engine import ValidationError\n"
            "try:\n    DeploymentSpec.validate({'name': 'a', 'source': 'huggingface', 'huggingface_repo_id': 'x', 'replicas': 'x'})\n"
            "except ValidationError as error:\n    print(error.errors(include_url=False)[0]['loc'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'typing_extensions'))))\n"
            "import pydantic_core\nprint(pydantic_core.ValidationError is ValidationError)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["('replicas',)", "['pydantic_core._pydantic_core']", "True"]


def test_the_package_loaded_first_is_the_one_records_use():
    code = ("import pydantic_core\nfrom gpustack_guard.core import record_engine\n"
            "print(record_engine.SchemaValidator is pydantic_core.SchemaValidator)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


# What each core_schema builder returns for the arguments records pass, against the plain dict records build.
_INT = {"type": "int"}


@pytest.mark.parametrize("ours, builder, args, keywords", [
    (lambda: records._schema("any"), "any_schema", (), {}),
    (lambda: records._SCALARS[str](min_length=1, max_length=9), "str_schema", (), {"min_length": 1, "max_length": 9}),
    (lambda: records._SCALARS[int](ge=1, le=5), "int_schema", (), {"ge": 1, "le": 5}),
    (lambda: records._SCALARS[float](gt=0.0), "float_schema", (), {"allow_inf_nan": False, "gt": 0.0}),
    (lambda: records._SCALARS[bool](), "bool_schema", (), {}),
    (lambda: records.type_schema(Optional[int], {}), "nullable_schema", (_INT,), {}),
    (lambda: records.type_schema(Literal["a", "b"], {}), "literal_schema", (["a", "b"],), {}),
    (lambda: records.type_schema(list[int], {"max_length": 3}), "list_schema", (_INT,), {"max_length": 3}),
    (lambda: records.type_schema(dict[str, Any], {}), "dict_schema", ({"type": "str"}, {"type": "any"}), {}),
    (lambda: records._with_default(_INT, default=None), "with_default_schema", (_INT,), {"default": None}),
    (lambda: records._with_default(_INT, default_factory=list), "with_default_schema", (_INT,),
     {"default_factory": list}),
    (lambda: records._schema("function-before", function={"type": "no-info", "function": _half}, schema=_INT),
     "no_info_before_validator_function", (_half, _INT), {}),
    (lambda: records._schema("model-field", schema=_INT), "model_field", (_INT,), {}),
    (lambda: records._schema("model-fields", fields={}, model_name="X", extra_behavior="forbid"),
     "model_fields_schema", ({},), {"model_name": "X", "extra_behavior": "forbid"}),
])
def test_schema_dicts_are_what_core_schemas_builders_make(ours, builder, args, keywords):
    from pydantic_core import core_schema

    assert ours() == getattr(core_schema, builder)(*args, **keywords)


def test_a_whole_record_schema_is_what_core_schemas_builders_make():
    from pydantic_core import core_schema as cs

    built = records.record_schema(Inner)
    size = cs.with_default_schema(cs.int_schema(ge=1, le=10), default=1)
    kind = cs.with_default_schema(cs.literal_schema(["a", "b"]), default="a")
    body = cs.model_fields_schema({"size": cs.model_field(size), "kind": cs.model_field(kind)}, model_name="Inner",
                                  extra_behavior="forbid")
    config = cs.CoreConfig(title="Inner", strict=True, extra_fields_behavior="forbid")
    assert built == cs.model_schema(Inner, body, config=config, ref=f"{__name__}.Inner")


def _all_records(base: type = Record) -> set[type]:
    found = set()
    for sub in base.__subclasses__():
        found |= {sub} | _all_records(sub)
    return found


def test_record_annotations_resolve_as_get_type_hints_resolves_them():
    import typing

    from gpustack_guard.core.records import _type_hints

    records = _all_records()
    assert DeploymentSpec in records and Fleet in records
    for record in records:
        assert _type_hints(record) == typing.get_type_hints(record), record


def test_string_annotations_with_forward_or_class_local_names_fall_back_to_get_type_hints():
    from gpustack_guard.core.records import _type_hints

    class Later(Record):
        __annotations__ = {"items": "list['Inner']", "count": "int | None"}
        count = None

    class Local(Record):
        Alias = int  # a name only the class body defines
        __annotations__ = {"value": "Alias"}

    assert _type_hints(Later)["items"] == list[Inner]
    assert _type_hints(Later)["count"] == (int | None)
    assert _type_hints(Local)["value"] is int
    assert Later.validate({"items": [{"size": 2}]}).items == [Inner(size=2)]


def _hash_the_long_way(record: Record) -> int:
    # the hash before the fast path (issue 34): lists and dicts of the fields made hashable, the rest as they are
    from gpustack_guard.core.records import _hashable
    return hash((type(record), tuple(_hashable(v) for v in record.__dict__.values())))


@pytest.mark.parametrize("record", [
    Inner(), Inner.validate({"size": 3, "kind": "b"}),  # no list or dict field: the fast path
    Policy(), Policy.validate({"strict": True, "cuda_graph_reserve": 2048}),
    Outer.validate({"name": "x"}),  # an empty list and dict
    Outer.validate({"name": "x", "tags": ["a", "b"], "extra": {"k": [1, {"n": 2}]}}),  # nested ones
], ids=["inner", "inner-set", "policy", "policy-set", "outer-empty", "outer-nested"])
def test_the_hash_is_the_long_ways_and_equal_records_hash_equal(record):
    assert hash(record) == _hash_the_long_way(record)
    assert hash(record) == hash(type(record).validate(record.__dict__ | {}))


def test_a_field_no_conversion_makes_hashable_still_refuses_a_hash():
    record = Outer.validate({"name": "x", "extra": {"k": {1, 2}}})  # a set inside a dict
    with pytest.raises(TypeError):
        hash(record)


class Kinds(Record):
    pair: Any = None
    other: Any = None


@pytest.mark.parametrize("left, right", [
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # a dict's key order: dicts compare equal whatever it is
    ({"k": [1, {"x": 1, "y": [2]}]}, {"k": [1, {"y": [2], "x": 1}]}),  # nested, inside a list
    ([{"a": 1, "b": 2}], [{"b": 2, "a": 1}]),
    (((1, 2), (3,)), ((1, 2), (3,))),  # tuples of tuples: the fast path
    (frozenset({1, 2}), frozenset({2, 1})),
    (-0.0, 0.0), (1, 1.0), (True, 1), (1.5, 1.5),  # equal numbers of other types hash equal, as Python's do
    (Kinds.validate({"pair": 1}), Kinds.validate({"pair": 1.0})),  # a record inside a record
])
def test_equal_records_hash_equal_for_every_field_type(left, right):
    for make in (lambda v: Kinds.validate({"pair": v}), lambda v: Kinds.validate({"pair": v, "other": [v]}),
                 lambda v: Kinds.validate({"pair": {"in": v}})):
        a, b = make(left), make(right)
        assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_copy_json_copies_every_container_and_keeps_scalars_and_tuples():
    from gpustack_guard.core.records import copy_json

    class Ordered(dict):
        pass

    shared = [1, {"a": [2.5, None]}]
    tup = (1, [2])
    data = {"x": shared, "y": shared, "z": Ordered(k=[True]), "t": tup, "s": "text", "n": [[], {}, [[3]]]}
    copied = copy_json(data)
    assert copied == data and list(copied) == list(data)

    before, after = containers(data, []), containers(copied, [])
    assert len(before) == len(after) == 14
    assert not {id(c) for c in before} & {id(c) for c in after}  # no container shared, at any depth
    assert copied["x"] is not copied["y"]  # one list reached twice is copied twice, as before
    assert type(copied["z"]) is dict  # a dict subclass comes back a plain dict
    assert copied["t"] is tup and copied["s"] is data["s"]  # tuples and scalars are not copied


class _Ordered(dict):
    pass


COPY_PLAN_CASES = {
    "scalars only": {"a": 1, "b": "x", "c": None, "d": 2.5, "e": True},
    "flat dict and list": {"a": 1, "d": {"k": 1, "j": "v"}, "l": [1, "two", None], "z": 3},
    "nested dict": {"d": {"k": {"deep": [1]}}, "n": 0},
    "nested list": {"l": [[1], {"a": 2}], "m": [1, 2]},
    "empty containers": {"d": {}, "l": [], "s": ""},
    "tuples are scalars": {"t": (1, [2]), "l": [(3,)]},
    "dict subclass, flat and nested": {"o": _Ordered(k=True), "p": _Ordered(k=[1])},
    "one list reached twice": {"x": [1, {"a": 2}], "y": None},
    "empty": {},
}


@pytest.mark.parametrize("data", COPY_PLAN_CASES.values(), ids=list(COPY_PLAN_CASES))
def test_copy_planned_equals_copy_json_and_shares_no_container(data):
    from gpustack_guard.core.records import copy_json, copy_plan, copy_planned

    data = dict(data)
    if "y" in data:
        data["y"] = data["x"]  # the same list under two keys: copied twice, as copy_json copies it
    planned, long_way = copy_planned(data, copy_plan(data)), copy_json(data)
    assert planned == long_way and list(planned) == list(long_way)
    assert [type(c) for c in containers(planned, [])] == [type(c) for c in containers(long_way, [])]
    assert not {id(c) for c in containers(data, [])} & {id(c) for c in containers(planned, [])}
    for key, item in data.items():
        if not isinstance(item, (dict, list)):
            assert planned[key] is item  # scalars and tuples as they are


def test_a_copy_plan_copies_flat_containers_in_c_and_nested_ones_deep():
    from gpustack_guard.core.records import copy_json, copy_plan

    plan = dict(copy_plan({"s": 1, "flat": {"a": 1}, "row": [1], "deep": {"a": [1]}, "rows": [[1]]}))
    assert plan == {"flat": dict, "row": list, "deep": copy_json, "rows": copy_json}


@pytest.mark.parametrize("record", [
    lambda: __import__("gpustack_guard.core.spec.model", fromlist=["Workload"]).Workload(),
    lambda: __import__("gpustack_guard.core.spec.model", fromlist=["OllamaAliases"]).OllamaAliases(num_ctx=4096),
    lambda: Policy(strict=True, headroom="error", activation_margin=0.25),
])
def test_flat_dict_is_to_dict_for_plain_records(record):
    made = record()
    flat, serialised = made.flat_dict(), type(made).core()[1].to_python(made)
    assert flat == serialised and list(flat) == list(serialised)
    assert [type(v) for v in flat.values()] == [type(v) for v in serialised.values()]


_OPTIONS = [{}, {"mode": "json"}, {"exclude_none": True}, {"exclude_unset": True}, {"exclude": {"tags", "kind"}},
            {"exclude": {"name"}, "exclude_none": True, "exclude_unset": True, "mode": "json"}]


class Flat(Record, strict=True):
    name: str = "n"
    note: Optional[str] = None
    tags: list[str] = field(factory=list)
    ratio: float = 0.5
    kind: Literal["a", "b"] = "a"


@pytest.mark.parametrize("options", _OPTIONS)
@pytest.mark.parametrize("data", [{}, {"name": "x", "tags": ["t", "u"]}, {"note": "y", "ratio": 2.0, "kind": "b"}])
def test_to_dict_of_a_plain_record_is_the_serializers_dict(data, options):
    made = Flat(**data)
    ours, theirs = made.to_dict(**options), Flat.core()[1].to_python(made, **options)
    assert ours == theirs and list(ours) == list(theirs)
    if "tags" in ours:
        assert ours["tags"] is not made.tags


@pytest.mark.parametrize("options", _OPTIONS)
def test_to_dict_of_a_nested_record_goes_through_the_serializer(options):
    made = Outer(name="o", inner={"size": 3})
    assert made.to_dict(**options) == Outer.core()[1].to_python(made, **options)
    if not options.get("exclude_unset"):
        assert made.to_dict(**options)["inner"] == {"size": 3, "kind": "a"}


def test_flat_dict_refuses_a_nested_record_and_copies_lists():
    from gpustack_guard.core.spec.model import Workload, WorkloadShare

    share = WorkloadShare(name="chat", prompt_tokens_p99=4096, max_output_tokens=512, concurrency=8)
    with pytest.raises(TypeError, match="Workload holds more than plain values"):
        Workload(mix=[share]).flat_dict()
    empty = Workload()
    assert empty.flat_dict()["mix"] == [] and empty.flat_dict()["mix"] is not empty.mix
