"""The typed endpoint on Litestar: ``POST /record`` takes and returns a msgspec ``Struct``
(Litestar's own decoder and encoder), answered 201 (a POST's default there). Served by
Uvicorn (bench/instructions.py).

Import path from the repository root: bench.apps.litestar_app:app
"""

from __future__ import annotations

import datetime
import decimal
import enum
import uuid

import msgspec
from litestar import Litestar, post


class Status(enum.Enum):
    DRAFT = "draft"
    PAID = "paid"
    SHIPPED = "shipped"


class Dimensions(msgspec.Struct):
    width_mm: int
    height_mm: int
    weight_g: int


class Record(msgspec.Struct):
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


@post("/record")
async def record(data: Record) -> Record:
    return data


app = Litestar(route_handlers=[record])
