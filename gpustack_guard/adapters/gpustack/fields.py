"""Typed reads of GPUStack answers: a missing, null or wrongly typed field is one line naming the endpoint, the
item and the field, never a KeyError or a validation dump (exit 3)."""

from __future__ import annotations

from typing import Any

from gpustack_guard.adapters.gpustack.client import INT64_MAX, ApiError, kind_of
from gpustack_guard.adapters.gpustack.transport import printable

REQUIRED = object()
_INFINITIES = (float("inf"), float("-inf"))
_LABELS = {str: "text", int: "an integer", float: "a number", bool: "a boolean", list: "a list", dict: "an object"}


class Item:
    """One object of an answer; `where` names it in messages ("item 3", "item 3: status.gpu_devices[1]")."""

    def __init__(self, method: str, path: str, where: str, value: Any, field: str = ""):
        self.method, self.path, self.where, self.prefix = method, path, where, field
        if not isinstance(value, dict):
            self.fail("", value, "an object")
        self.raw: dict = value

    def _name(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix and key else self.prefix or key

    def fail(self, key: str, value: Any, expected: str):
        """Raise the one-line error for field `key` of this object holding `value` where `expected` was due."""
        name = self._name(key)
        subject = f"{self.where}: field '{name}'" if name else self.where
        raise ApiError(self.method, self.path, f"{subject} is {kind_of(value)}, expected {expected}")

    def state(self, key: str, default: Any = REQUIRED) -> Any:
        """A state enum's text, lower-cased: GPUStack writes "ready", "running", "error"; a server or proxy that
        writes "Running" or "ERROR" means the same, and a check for "error" must not miss it."""
        value = self.get(key, str, default)
        return value.lower() if isinstance(value, str) else value

    def out_of_range(self, key: str, why: str):
        """Raise the one-line error for field `key` whose value the record it feeds refuses (`why`)."""
        raise ApiError(self.method, self.path, f"{self.where}: field '{self._name(key)}' is out of range: {why}")

    def get(self, key: str, kind: type, default: Any = REQUIRED) -> Any:
        """The field if present and of `kind` (an int where a number is asked is fine); null or absent is
        `default`, or an error when the field is required."""
        value: Any = self.raw.get(key)
        if type(value) is kind:  # the common case, first: a fleet read checks millions of fields
            number: Any = value  # (mypy narrows `value` to object here)
            if kind is int and not -INT64_MAX - 1 <= number <= INT64_MAX:
                self.fail(key, value, "a 64-bit integer")
            if kind is float and (number != number or number in _INFINITIES):  # 1e999 reads as infinity
                self.fail(key, value, "a finite number")
            return value
        if value is None:
            if default is REQUIRED:
                self.fail(key, None, _LABELS[kind])
            return default
        if kind is float and type(value) is int:
            if not -INT64_MAX - 1 <= value <= INT64_MAX:
                self.fail(key, value, "a finite number")
            return value
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            self.fail(key, value, _LABELS[kind])
        return value

    def count(self, key: str, default: Any = REQUIRED, *, positive: bool = False) -> Any:
        """A whole number of bytes, items or an index: an integer >= 0 (> 0 when `positive`)."""
        value = self.get(key, int, default)
        if value is not default and (value < 0 or positive and value == 0):
            self.fail(key, value, "a positive integer" if positive else "an integer >= 0")
        return value

    def child(self, key: str) -> Item | None:
        value = self.raw.get(key)
        if value is None:
            return None
        return Item(self.method, self.path, self.where, value, self._name(key))

    def children(self, key: str) -> list[Item]:
        values = self.get(key, list, [])
        return [Item(self.method, self.path, self.where, v, f"{self._name(key)}[{i}]") for i, v in enumerate(values)]

    def mapping(self, key: str, value_kind: type) -> dict:
        found = self.get(key, dict, {})
        for name, value in found.items():
            if not isinstance(value, value_kind) or isinstance(value, bool) and value_kind is not bool:
                self.fail(f"{key}.{printable(name, 60)}", value, _LABELS[value_kind])
        return found
