"""``SchemaRegistry``: the JSON Schemas of value types, with records as components.

Each schema describes what the JSON converter reads (``direction="input"``) or writes
(``"output"``) for a type. Records (attrs classes, dataclasses, ``TypedDict``s, pydantic
models) are components, referenced by ``$ref``; every other type is inline. The registry
makes both directions' schemas of a record when it first meets it, then names it:

- A component is named after its class (``Item``); when two classes share that name, each is
  named by its module and qualified name (``app.models.Item``), so a name depends on the
  set of classes registered, not on their order (only classes that share even that name,
  made by one function, are numbered in order: ``__2``). Characters a component name
  cannot hold (``<locals>``) are replaced with ``_``.
- When a record's input and output schemas are equal, it is one component. Otherwise it is
  two, ``Item-Input`` and ``Item-Output``: a field with a default is optional on input but
  always written, so such a record differs, and so does one whose fields hold a
  ``Decimal``, a ``timedelta`` or a record that differs.

A ``$ref`` that ``schema_for`` returns (or that a component holds) is a dictionary the
registry keeps: registering a class whose name collides renames the earlier references in
place. So a document is complete once every type is registered; then ``components()``.
"""

from __future__ import annotations

import collections.abc as abc
import enum
import types
import typing
from typing import Any

import attrs

from .._codec import pydantic_models
from .._codec.check import UnsupportedType, type_name
from .._codec.shapes import is_fixed_tuple, is_mapping, is_record, is_sequence
from .inline import Direction, choices_schema, constraint_keywords, json_default, scalar_schema
from .records import PYDANTIC_REF, component_name, fields_of, model_ref, pydantic_schemas

__all__ = ["COMPONENTS", "SchemaRegistry"]

#: Where a component sits in an OpenAPI document.
COMPONENTS = "#/components/schemas/"
_DIRECTIONS: tuple[Direction, Direction] = ("input", "output")
_WRAPPERS = frozenset({typing.Required, typing.NotRequired, typing.ClassVar})
_SETS = frozenset({set, frozenset, abc.Set, abc.MutableSet})


@attrs.define(eq=False)
class _Component:
    """A record's schemas: ``bodies`` by direction (a pydantic definition may have one)."""

    short: str
    qualified: str
    order: int
    bodies: dict[Direction, dict[str, Any]] = attrs.Factory(dict)
    split: bool = False


def _shape(kind: Any) -> str | None:
    """The JSON form of ``kind`` that length bounds apply to, members of a union included."""
    while typing.get_origin(kind) is typing.Annotated:
        kind = typing.get_args(kind)[0]
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        shapes = {_shape(m) for m in typing.get_args(kind)} - {None}
        return shapes.pop() if len(shapes) == 1 else None
    if kind is str:
        return "string"
    if is_sequence(kind):
        return "array"
    return "object" if is_mapping(kind) else None


class SchemaRegistry:
    """JSON Schemas (2020-12) of the types trioframe's converters read and write, and the
    components they reference. Used at startup (nothing here runs per request)."""

    def __init__(self) -> None:
        self._components: dict[Any, _Component] = {}
        # every $ref handed out: (the dictionary, its component, its direction)
        self._refs: list[tuple[dict[str, Any], _Component, Direction]] = []
        self._ref_of: dict[int, _Component] = {}
        self._names: dict[_Component, str] = {}
        # by component order: whether its two schemas differ, and the components it refers to
        # (compared once: each ``schema_for`` settles the names again)
        self._compared: dict[int, tuple[bool, set[int]]] = {}

    def schema_for(self, kind: Any, *, direction: Direction) -> dict[str, Any]:
        """The schema of ``kind`` as the JSON converter reads it (``"input"``) or writes it
        (``"output"``): inline, or ``{"$ref": "#/components/schemas/Name"}`` for a record,
        whose components are registered too. ``UnsupportedType`` for a type without one."""
        if direction not in _DIRECTIONS:
            raise ValueError(f"direction must be 'input' or 'output', not {direction!r}")
        schema = self._schema(kind, direction)
        self._settle()
        return schema

    def components(self) -> dict[str, dict[str, Any]]:
        """Every registered component by name, sorted by name."""
        out: dict[str, dict[str, Any]] = {}
        for component in self._components.values():
            base = self._names[component]
            if component.split:
                out[f"{base}-Input"] = component.bodies["input"]
                out[f"{base}-Output"] = component.bodies["output"]
            else:
                out[base] = next(iter(component.bodies.values()))
        return dict(sorted(out.items()))

    # -- schemas ----------------------------------------------------------------------------
    def _schema(self, kind: Any, direction: Direction) -> dict[str, Any]:
        origin = typing.get_origin(kind)
        if origin in _WRAPPERS:
            return self._schema(typing.get_args(kind)[0], direction)
        if origin is typing.Annotated:
            schema = self._schema(typing.get_args(kind)[0], direction)
            schema.update(constraint_keywords(kind, _shape(kind)))
            return schema
        if isinstance(kind, typing.NewType):
            return self._schema(kind.__supertype__, direction)
        if kind is Any:
            return {}
        if pydantic_models.is_model(kind):
            return self._pydantic_ref(kind, direction)
        if (isinstance(kind, type) and issubclass(kind, enum.Enum)) or origin is typing.Literal:
            return choices_schema(kind)
        scalar = scalar_schema(kind, direction)
        if scalar is not None:
            return scalar
        if origin in (typing.Union, types.UnionType):
            return self._union(typing.get_args(kind), direction)
        if is_record(kind):
            return self._record_ref(kind, direction)
        if is_sequence(kind):
            return self._array(kind, direction)
        if is_mapping(kind):
            args = typing.get_args(kind)
            if len(args) == 2:
                return {"type": "object", "additionalProperties": self._schema(args[1], direction)}
            return {"type": "object"}
        raise UnsupportedType(f"no JSON Schema for {type_name(kind)}")

    def _union(self, members: tuple[Any, ...], direction: Direction) -> dict[str, Any]:
        """``anyOf`` the members (an integer is a number: ``int | float`` is a number)."""
        schemas = [self._schema(member, direction) for member in members]
        if {"type": "number"} in schemas:
            schemas = [s for s in schemas if s != {"type": "integer"}]
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}

    def _array(self, kind: Any, direction: Direction) -> dict[str, Any]:
        args = typing.get_args(kind)
        if is_fixed_tuple(kind):
            items = [self._schema(arg, direction) for arg in args]
            n = len(items)
            return {
                "type": "array",
                "prefixItems": items,
                "items": False,
                "minItems": n,
                "maxItems": n,
            }
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = self._schema(args[0], direction)
        if (typing.get_origin(kind) or kind) in _SETS:
            schema["uniqueItems"] = True
        return schema

    def _record_body(self, kind: type, direction: Direction) -> dict[str, Any]:
        """A record's object schema. On input, the fields the converter needs are required
        and a default is shown as JSON; on output, every field of an attrs class or a
        dataclass is written (a ``TypedDict``'s optional keys may be absent)."""
        properties: dict[str, Any] = {}
        required: list[str] = []
        always_written = direction == "output" and not typing.is_typeddict(kind)
        for field in fields_of(kind):
            schema = self._schema(field.kind, direction)
            if direction == "input" and field.has_default:
                writable, value = json_default(field.default)
                if writable:
                    schema["default"] = value
            properties[field.name] = schema
            if field.required or always_written:
                required.append(field.name)
        body: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            body["required"] = required
        return body

    # -- components and references ----------------------------------------------------------
    def _new_component(self, key: Any, short: str, qualified: str) -> _Component:
        component = _Component(short, qualified, len(self._components))
        self._components[key] = component
        return component

    def _ref(self, component: _Component, direction: Direction) -> dict[str, Any]:
        ref: dict[str, Any] = {"$ref": ""}  # named by _settle
        self._refs.append((ref, component, direction))
        self._ref_of[id(ref)] = component
        return ref

    def _record_ref(self, kind: type, direction: Direction) -> dict[str, Any]:
        component = self._components.get(kind)
        if component is None:  # registered first: a recursive field finds it
            qualified = component_name(f"{kind.__module__}.{kind.__qualname__}")
            component = self._new_component(kind, component_name(kind.__name__), qualified)
            for side in _DIRECTIONS:
                component.bodies[side] = self._record_body(kind, side)
        return self._ref(component, direction)

    def _pydantic_ref(self, kind: Any, direction: Direction) -> dict[str, Any]:
        """A model's schema is pydantic's, in each mode; its ``$defs`` become components."""
        key = component_name(model_ref(kind))
        component = self._components.get(key)
        if component is None:
            short = component_name(kind.__name__)
            qualified = component_name(f"{kind.__module__}.{kind.__qualname__}")
            component = self._new_component(key, short, qualified)
            for side in _DIRECTIONS:
                made = pydantic_schemas(kind, side)
                for ref in made.defs:
                    if ref not in self._components:
                        self._new_component(ref, *made.names[ref])
                for ref, body in made.defs.items():
                    self._components[ref].bodies.setdefault(side, self._adopt(body, side))
                component.bodies[side] = self._adopt(made.body, side)
        return self._ref(component, direction)

    def _adopt(self, schema: Any, direction: Direction) -> Any:
        """pydantic's schema with its references made the registry's own."""
        if isinstance(schema, list):
            return [self._adopt(item, direction) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out = {key: self._adopt(value, direction) for key, value in schema.items()}
        target = out.get("$ref")
        if isinstance(target, str) and target.startswith(PYDANTIC_REF):
            component = self._components[target[len(PYDANTIC_REF) :]]
            self._refs.append((out, component, direction))
            self._ref_of[id(out)] = component
        return out

    # -- naming -----------------------------------------------------------------------------
    def _canonical(self, schema: Any, found: set[int]) -> Any:
        """``schema`` with each reference replaced by its component's number (collected in
        ``found``), to compare the two directions of a component."""
        if isinstance(schema, list):
            return [self._canonical(item, found) for item in schema]
        if not isinstance(schema, dict):
            return schema
        out = {key: self._canonical(value, found) for key, value in schema.items()}
        component = self._ref_of.get(id(schema))
        if component is not None:
            out["$ref"] = component.order
            found.add(component.order)
        return out

    def _settle(self) -> None:
        """Decide which components split into ``-Input``/``-Output`` (their schemas differ,
        or one they reference splits), name them, and write every reference."""
        by_order = sorted(self._components.values(), key=lambda c: c.order)
        referrers: dict[int, list[_Component]] = {}
        pending = []
        for component in by_order:
            compared = self._compared.get(component.order)
            if compared is None:  # a component's schemas are complete once registered
                found: set[int] = set()
                sides = [self._canonical(body, found) for body in component.bodies.values()]
                compared = self._compared[component.order] = (
                    len(sides) == 2 and sides[0] != sides[1],
                    found,
                )
            differ, found = compared
            for order in found:
                referrers.setdefault(order, []).append(component)
            if differ:
                pending.append(component)
        while pending:
            component = pending.pop()
            if component.split:
                continue
            component.split = True
            pending.extend(r for r in referrers.get(component.order, []) if len(r.bodies) == 2)
        self._names = self._naming(by_order)
        for ref, component, direction in self._refs:
            suffix = f"-{direction.capitalize()}" if component.split else ""
            ref["$ref"] = f"{COMPONENTS}{self._names[component]}{suffix}"

    @staticmethod
    def _naming(components: list[_Component]) -> dict[_Component, str]:
        """The class name, or the qualified name where two components share the class name
        (and a number after it where even that is shared: classes made by one function)."""
        sharing: dict[str, int] = {}
        for component in components:
            sharing[component.short] = sharing.get(component.short, 0) + 1
        names: dict[_Component, str] = {}
        taken: dict[str, int] = {}
        for component in components:
            name = component.short if sharing[component.short] == 1 else component.qualified
            taken[name] = taken.get(name, 0) + 1
            names[component] = name if taken[name] == 1 else f"{name}__{taken[name]}"
        return names
