"""The fields of records as the JSON converter reads and writes them, and the schemas of
pydantic models as pydantic generates them.

attrs classes and dataclasses are read and written by their attribute names (cattrs does
not use attrs aliases; a private ``_x`` is the key ``_x``), every field the initializer
takes (``init=False`` ones are neither read nor written). A ``TypedDict`` is written with
the keys it has.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import attrs

from .._codec.check import UnsupportedType, type_name

__all__ = [
    "NO_DEFAULT",
    "PYDANTIC_REF",
    "Field",
    "PydanticSchemas",
    "component_name",
    "fields_of",
    "model_ref",
    "pydantic_schemas",
]

#: Factories whose value is the same on every call: their value is written as the default.
_PURE_FACTORIES: frozenset[Callable[[], Any]] = frozenset({list, dict, set, frozenset, tuple})
#: A field's default when it has none, or one that cannot be shown (another factory's).
NO_DEFAULT: Any = object()


@attrs.frozen
class Field:
    """One field: its key, its annotation, whether the converter needs it on input, and
    its default (``NO_DEFAULT`` when it has none or one that cannot be shown)."""

    name: str
    kind: Any
    required: bool
    default: Any = NO_DEFAULT

    @property
    def has_default(self) -> bool:
        """Whether a default is known and can be shown."""
        return self.default is not NO_DEFAULT


def _hints(kind: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(kind, include_extras=True)
    except Exception as exc:
        raise UnsupportedType(
            f"cannot resolve the annotations of {type_name(kind)}: {exc}"
        ) from None


def _factory_value(factory: Callable[[], Any]) -> Any:
    return factory() if factory in _PURE_FACTORIES else NO_DEFAULT


def _attrs_fields(kind: type, hints: dict[str, Any]) -> list[Field]:
    out = []
    for field in attrs.fields(kind):
        if not field.init:
            continue
        default = field.default
        if default is attrs.NOTHING:
            out.append(Field(field.name, hints.get(field.name, Any), required=True))
            continue
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            takes_self = default.takes_self
            default = NO_DEFAULT if takes_self else _factory_value(default.factory)
        out.append(Field(field.name, hints.get(field.name, Any), False, default))
    return out


def _dataclass_fields(kind: Any, hints: dict[str, Any]) -> list[Field]:
    out = []
    for field in dataclasses.fields(kind):
        if not field.init:
            continue
        annotation = hints.get(field.name, Any)
        if field.default is not dataclasses.MISSING:
            out.append(Field(field.name, annotation, False, field.default))
        elif field.default_factory is not dataclasses.MISSING:
            out.append(Field(field.name, annotation, False, _factory_value(field.default_factory)))
        else:
            out.append(Field(field.name, annotation, required=True))
    return out


def fields_of(kind: type) -> list[Field]:
    """The fields of the attrs class, dataclass or ``TypedDict`` ``kind``, in order;
    ``required`` says whether the converter needs the key on input."""
    hints = _hints(kind)
    if attrs.has(kind):
        return _attrs_fields(kind, hints)
    if dataclasses.is_dataclass(kind):
        return _dataclass_fields(kind, hints)
    return [Field(name, hint, _required_key(kind, name, hint)) for name, hint in hints.items()]


def _required_key(kind: Any, name: str, hint: Any) -> bool:
    """Whether a ``TypedDict`` requires the key: ``Required``/``NotRequired`` when written
    (Python 3.11 cannot see them in a string annotation; the startup check refuses that),
    else the class's totality."""
    wrapper = typing.get_origin(hint)
    if wrapper in (typing.Required, typing.NotRequired):
        return wrapper is typing.Required
    return name in kind.__required_keys__


# -- pydantic -------------------------------------------------------------------------------
#: Where pydantic's references point while a model's schema is made: the registry turns
#: them into references to its components.
PYDANTIC_REF = "#/$pydantic/"


@attrs.frozen
class PydanticSchemas:
    """One model's schema from pydantic in one mode: ``body`` (its ``$defs`` removed; the
    model's own definition when it is recursive), and ``defs``: each definition's body by
    pydantic's reference to it, with its ``(short name, qualified name)`` in ``names``.
    ``$ref``s point to ``PYDANTIC_REF`` + reference."""

    body: dict[str, Any]
    defs: dict[str, dict[str, Any]]
    names: dict[str, tuple[str, str]]


def model_ref(kind: Any) -> str:
    """pydantic's reference to the model class ``kind`` (``module.Qualname:id``)."""
    core = getattr(kind, "__pydantic_core_schema__", {})
    ref = core.get("ref") or core.get("schema", {}).get("schema_ref")
    return str(ref) if ref else f"{kind.__module__}.{kind.__qualname__}:{id(kind)}"


def _names(core_ref: str) -> tuple[str, str]:
    """``(short, qualified)`` names of a pydantic reference, generic arguments included:
    ``Page[Item]`` and ``app.Page[app.Item]``, with the characters a component name cannot
    have replaced."""
    parts = [part.rsplit(":", 1)[0] for part in _split_generic(core_ref)]
    qualified = "".join(parts)
    short = "".join(part.rsplit(".", 1)[-1] for part in parts)
    return component_name(short), component_name(qualified)


def _split_generic(ref: str) -> list[str]:
    out, current = [], ""
    for char in ref:
        if char in "[],":
            out.extend([current, char])
            current = ""
        else:
            current += char
    return [*out, current]


def component_name(name: str) -> str:
    """A name OpenAPI allows for a component (``^[a-zA-Z0-9._-]+$``)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)


def pydantic_schemas(kind: Any, direction: str) -> PydanticSchemas:
    """The schema of the model class ``kind``: ``validation`` mode for input,
    ``serialization`` for output (what ``model_dump(mode="json")`` writes). Definitions are
    named by pydantic's full reference, so two models never share one."""
    from pydantic.json_schema import CoreModeRef, DefsRef, GenerateJsonSchema

    names: dict[str, tuple[str, str]] = {}

    class ByReference(GenerateJsonSchema):
        def get_defs_ref(self, core_mode_ref: CoreModeRef) -> DefsRef:
            ref = DefsRef(component_name(core_mode_ref[0]))
            names[ref] = _names(core_mode_ref[0])
            self._prioritized_defsref_choices[ref] = [ref]
            return ref

    mode = "validation" if direction == "input" else "serialization"
    schema = kind.model_json_schema(
        mode=mode, ref_template=PYDANTIC_REF + "{model}", schema_generator=ByReference
    )
    defs = schema.pop("$defs", {})
    own = component_name(model_ref(kind))
    if schema == {"$ref": PYDANTIC_REF + own}:  # a recursive model: its body is a definition
        schema = defs.pop(own)
    return PydanticSchemas(schema, defs, names)
