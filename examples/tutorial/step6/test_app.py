"""Tests of the bookshelf: ``pytest`` (or ``nox -s tests``) runs them."""

from collections.abc import AsyncIterator

import pytest
from trioframe.testing import TestClient, TestHttpClient

from app import Settings, create_app

KINDRED = {"title": "Kindred", "author": "Octavia E. Butler", "year": 1979}


@pytest.fixture
async def client() -> AsyncIterator[TestHttpClient]:
    async with TestClient(create_app()) as client:  # a fresh app, with an empty shelf
        yield client


async def test_index(client: TestHttpClient) -> None:
    response = await client.get("/")
    assert response.status_code == 200
    assert response.text == "Welcome to the bookshelf!"


async def test_create_then_read(client: TestHttpClient) -> None:
    created = await client.post("/books", json=KINDRED)
    assert created.status_code == 201
    book = created.json()
    assert book == {"id": 1, **KINDRED}

    assert (await client.get("/books/1")).json() == book
    assert (await client.get("/books")).json() == [book]
    assert (await client.get("/books", params={"author": "Someone Else"})).json() == []


async def test_replace_and_delete(client: TestHttpClient) -> None:
    await client.post("/books", json=KINDRED)
    replaced = await client.put("/books/1", json={**KINDRED, "title": "Dawn", "year": 1987})
    assert replaced.json()["title"] == "Dawn"

    deleted = await client.delete("/books/1")
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert (await client.get("/books/1")).status_code == 404


async def test_invalid_books_are_refused(client: TestHttpClient) -> None:
    response = await client.post("/books", json={"title": "", "author": "Anon", "year": 1200})
    assert response.status_code == 422
    assert response.json()["errors"] == [
        "body.title: must be at least 1 character long",
        "body.year: must be at least 1450",
    ]
    not_json = await client.post("/books", content=b"title=Kindred")
    assert not_json.status_code == 415


async def test_missing_book(client: TestHttpClient) -> None:
    response = await client.get("/books/42")
    assert response.status_code == 404
    assert response.json() == {
        "status": 404,
        "error": "Not Found",
        "message": "book 42 not found",
    }
    assert (await client.get("/books/forty-two")).status_code == 400


async def test_openapi_document(client: TestHttpClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert document["info"]["title"] == "Bookshelf"
    operations = {
        (method, path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }
    assert set(operations) == {
        ("get", "/books"),
        ("post", "/books"),
        ("get", "/books/{book_id}"),
        ("put", "/books/{book_id}"),
        ("delete", "/books/{book_id}"),
    }
    create = operations["post", "/books"]
    assert create["operationId"] == "create_book"
    assert create["summary"] == "Add a book to the shelf."
    assert "201" in create["responses"] and "422" in create["responses"]
    assert operations["get", "/books/{book_id}"]["responses"]["404"]["description"] == (
        "no book has this id"
    )


async def test_documentation_pages(client: TestHttpClient) -> None:
    for page in ("/docs", "/redoc"):
        response = await client.get(page)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")


async def test_health_and_metrics(client: TestHttpClient) -> None:
    assert (await client.get("/health")).text == "ok"
    await client.get("/books")
    metrics = (await client.get("/metrics")).text
    assert 'http_route="/books"' in metrics


async def test_settings_from_the_environment() -> None:
    assert Settings.from_env({}) == Settings("text", metrics=True)
    settings = Settings.from_env({"BOOKSHELF_LOG_FORMAT": "json", "BOOKSHELF_METRICS": "off"})
    assert settings == Settings("json", metrics=False)
    with pytest.raises(ValueError, match="BOOKSHELF_LOG_FORMAT"):
        Settings.from_env({"BOOKSHELF_LOG_FORMAT": "xml"})
    async with TestClient(create_app(settings)) as client:
        assert (await client.get("/metrics")).status_code == 404
