"""pydantic-core's compiled validator, loaded without the Python half of its package.

Why: `import pydantic_core` runs its `core_schema` module (some 200 TypedDicts and builder functions) and
typing_extensions before anything validates: ~179 M instructions, ~11 % of a whole 1,000-spec `gsg validate`
run (benchmarks/scale.py; docs/performance.md, twenty-first round). Records need only the compiled module's
SchemaValidator, SchemaSerializer, ValidationError and PydanticUndefined, and build their schemas as plain
dicts (core/records.py). The compiled module is the very one the package re-exports: loaded here first, the
package finds it in sys.modules when pydantic imports it later (JSON Schema, the live fleet), so
`ValidationError` is one class either way.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING

_COMPILED = "pydantic_core._pydantic_core"


def _compiled() -> ModuleType:
    loaded = sys.modules.get(_COMPILED)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("pydantic_core")  # finds, does not import, a top-level package
    locations = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec(_COMPILED, list(locations)) if locations else None
    if spec is None or spec.loader is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        import pydantic_core._pydantic_core as through_package  # an unusual install: the ordinary way

        return through_package
    module = importlib.util.module_from_spec(spec)
    sys.modules[_COMPILED] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_COMPILED]
        raise
    return module


if TYPE_CHECKING:
    from pydantic_core import PydanticUndefined, SchemaSerializer, SchemaValidator, ValidationError
else:
    _engine = _compiled()
    SchemaValidator = _engine.SchemaValidator
    SchemaSerializer = _engine.SchemaSerializer
    ValidationError = _engine.ValidationError
    PydanticUndefined = _engine.PydanticUndefined

__all__ = ["PydanticUndefined", "SchemaSerializer", "SchemaValidator", "ValidationError"]
