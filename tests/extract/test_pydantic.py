"""Pydantic v2 models as extractor types: validated by pydantic, errors in the standard list,
written by Response.json in the form they read back."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pydantic

from trioframe import Form, Json, Path, Query, Response, Router
from trioframe.testing import TestClient


class Tag(pydantic.BaseModel):
    name: str


class Event(pydantic.BaseModel):
    id: uuid.UUID
    when: datetime.datetime
    seats: int = 1
    tags: list[Tag] = pydantic.Field(default_factory=list)

    @pydantic.field_validator("seats")
    @classmethod
    def positive(cls, seats: int) -> int:
        if seats < 1:
            raise ValueError("must be at least 1")
        return seats


class Search(pydantic.BaseModel):
    q: str
    page: int = 1
    kinds: list[str] = []


class Key(pydantic.BaseModel):
    day: datetime.date


ID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
WHEN = datetime.datetime(2024, 5, 1, 9, 30, tzinfo=datetime.UTC)


def _router(seen: list[Any]) -> Router:
    async def create(event: Json[Event]) -> Response:
        seen.append(event)
        return Response.json(event)

    async def search(params: Query[Search]) -> Response:
        seen.append(params)
        return Response.text("ok")

    async def submit(form: Form[Search]) -> Response:
        seen.append(form)
        return Response.text("ok")

    async def by_day(key: Path[Key]) -> Response:
        seen.append(key)
        return Response.text("ok")

    async def many(events: Json[list[Event]]) -> Response:
        seen.append(events)
        return Response.text("ok")

    return (
        Router()
        .post("/events", create)
        .get("/search", search)
        .post("/search", submit)
        .get("/days/{day}", by_day)
        .post("/many", many)
    )


async def test_a_model_is_validated_by_pydantic_from_json_query_form_and_path() -> None:
    seen: list[Any] = []
    body = {"id": ID, "when": "2024-05-01T09:30:00Z", "tags": [{"name": "a"}]}
    async with TestClient(_router(seen)) as client:
        created = await client.post("/events", json=body)
        assert (await client.get("/search?q=x&page=2&kinds=a&kinds=b")).status_code == 200
        assert (await client.post("/search", data={"q": "y"})).status_code == 200
        assert (await client.get("/days/2024-05-01")).status_code == 200
    assert created.status_code == 200
    event = Event(id=uuid.UUID(ID), when=WHEN, tags=[Tag(name="a")])
    assert seen == [
        event,
        Search(q="x", page=2, kinds=["a", "b"]),
        Search(q="y"),
        Key(day=datetime.date(2024, 5, 1)),
    ]
    assert created.json() == {
        "id": ID,
        "when": "2024-05-01T09:30:00Z",
        "seats": 1,
        "tags": [{"name": "a"}],
    }


async def test_pydantic_errors_land_in_the_standard_errors_list() -> None:
    async with TestClient(_router([])) as client:
        bad = await client.post("/events", json={"id": "nope", "seats": 0, "tags": [{}]})
        shape = await client.post("/events", json=[1])
        nested = await client.post("/many", json=[{"id": ID, "when": "x"}])
        query = await client.get("/search?page=x")
    assert bad.status_code == 422
    errors = bad.json()["errors"]
    assert "body.when: required" in errors
    assert "body.tags[0].name: required" in errors
    assert any(e.startswith("body.id: input should be a valid UUID") for e in errors)
    assert any(e.startswith("body.seats: value error, must be at least 1") for e in errors)
    assert (shape.status_code, shape.json()["errors"]) == (422, ["body: expected a JSON object"])
    assert nested.status_code == 422
    assert [e.split(":")[0] for e in nested.json()["errors"]] == ["body[0].when"]
    assert query.status_code == 400
    assert sorted(e.split(":")[0] for e in query.json()["errors"]) == ["query.page", "query.q"]


async def test_what_response_json_writes_reads_back_equal() -> None:
    seen: list[Any] = []
    events = [Event(id=uuid.uuid4(), when=WHEN, seats=3, tags=[Tag(name="t")])]
    async with TestClient(_router(seen)) as client:
        response = await client.post(
            "/many",
            content=Response.json(events).body,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 200
    assert seen == [events]
