"""OpenAPI for trioframe applications: JSON Schema (2020-12) of the value types, written over
the converters that read and write them (``schema``). Used at startup, never per request.

API: ``SchemaRegistry().schema_for(kind, direction="input" | "output")`` returns the schema
of ``kind`` inline, or a ``$ref`` to ``#/components/schemas/Name`` for a record (attrs class,
dataclass, ``TypedDict``, pydantic model), whose component it registers; ``components()``
returns them all by name. See ``schema`` for how components are named and when a record
has separate ``-Input`` and ``-Output`` components.
"""

from __future__ import annotations

from .inline import Direction
from .schema import COMPONENTS, SchemaRegistry

__all__ = ["COMPONENTS", "Direction", "SchemaRegistry"]
