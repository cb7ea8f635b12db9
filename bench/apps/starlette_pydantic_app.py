"""The typed endpoint on Starlette with pydantic v2 by hand: ``POST /record`` reads the body
with ``Record.model_validate_json`` and answers 201 with ``model_dump_json``; a body that does
not fit is a 422 with pydantic's errors. Served by Uvicorn (bench/instructions.py).

Import path from the repository root: bench.apps.starlette_pydantic_app:app
"""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid

import pydantic
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


class Status(enum.Enum):
    DRAFT = "draft"
    PAID = "paid"
    SHIPPED = "shipped"


class Dimensions(pydantic.BaseModel):
    width_mm: int
    height_mm: int
    weight_g: int


class Record(pydantic.BaseModel):
    id: uuid.UUID
    name: str
    sku: str
    price: decimal.Decimal
    quantity: int
    created_at: datetime.datetime
    ship_on: datetime.date
    status: Status
    tags: list[str]
    dimensions: Dimensions
    note: str | None
    priority: int


async def record(request: Request) -> Response:
    try:
        value = Record.model_validate_json(await request.body())
    except pydantic.ValidationError as exc:
        return Response(exc.json(), status_code=422, media_type="application/json")
    return Response(value.model_dump_json(), status_code=201, media_type="application/json")


app = Starlette(routes=[Route("/record", record, methods=["POST"])])
