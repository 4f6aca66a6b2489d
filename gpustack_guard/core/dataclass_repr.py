"""One `__repr__` shared by the dataclasses on the start-up path (those `gsg validate` imports).

Why: on Python 3.10 to 3.12, `@dataclass` compiles each generated method with its own `exec` at import time,
~0.07 ms a `__repr__`; the quickstart imports about 80 dataclasses (docs/performance.md, seventh round). This
function is compiled once, with this module's bytecode, and prints what `repr=True` would: the class's qualified
name and each field shown by `repr` (not those declared `field(repr=False)`), "..." for a record inside itself.
A class uses it with `@dataclass(..., repr=False)` and `__repr__ = fields_repr` in its body.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any


@reprlib.recursive_repr()
def fields_repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{self.__class__.__qualname__}({shown})"
