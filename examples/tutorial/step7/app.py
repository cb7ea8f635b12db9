"""Tutorial step 6: the documented API of step 5, configured from the environment, with
access logs, a health check and Prometheus metrics.

``trioframe run app:create_app --workers 4`` serves it with four worker processes;
``BOOKSHELF_LOG_FORMAT=json`` writes the access log as JSON lines."""

import os
from collections.abc import Mapping
from typing import Annotated, Literal, Self

import attrs
from annotated_types import Ge, Le, MaxLen, MinLen
from trioframe import Error, Json, Path, Query, Router, Server, State
from trioframe.middleware import LoggerMiddleware

LogFormat = Literal["text", "json"]


@attrs.frozen
class Settings:
    """What may differ between a laptop and production, read from environment variables."""

    log_format: LogFormat = "text"
    metrics: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Self:
        log_format: LogFormat
        match environ.get("BOOKSHELF_LOG_FORMAT", "text"):
            case "text":
                log_format = "text"
            case "json":
                log_format = "json"
            case other:
                raise ValueError(f"BOOKSHELF_LOG_FORMAT must be text or json, not {other!r}")
        metrics = environ.get("BOOKSHELF_METRICS", "on") != "off"
        return cls(log_format, metrics)


Title = Annotated[str, MinLen(1), MaxLen(200)]
Author = Annotated[str, MinLen(1), MaxLen(100)]
Year = Annotated[int, Ge(1450), Le(2100)]


@attrs.frozen
class NewBook:
    """What a client sends to create or replace a book."""

    title: Title
    author: Author
    year: Year


@attrs.frozen
class Book:
    id: int
    title: str
    author: str
    year: int


class Shelf:
    """The books, in memory. A real application would keep them in a database."""

    def __init__(self) -> None:
        self.books: dict[int, Book] = {}
        self.last_id = 0

    def add(self, new: NewBook) -> Book:
        self.last_id += 1
        book = Book(self.last_id, new.title, new.author, new.year)
        self.books[book.id] = book
        return book

    def get(self, book_id: int) -> Book:
        book = self.books.get(book_id)
        if book is None:
            raise Error.not_found(f"book {book_id}")
        return book


async def index() -> str:
    """A greeting."""
    return "Welcome to the bookshelf!"


async def health() -> str:
    """For load balancers and orchestrators: 200 while the server is up."""
    return "ok"


async def list_books(
    shelf: State[Shelf],
    author: Query[str | None] = None,
    limit: Query[Annotated[int, Ge(1), Le(100)]] = 20,
) -> list[Book]:
    """List the books, optionally by one author."""
    books = [book for book in shelf.books.values() if author is None or book.author == author]
    return books[:limit]


async def get_book(shelf: State[Shelf], book_id: Path[int]) -> Book:
    """Get one book."""
    return shelf.get(book_id)


async def create_book(shelf: State[Shelf], new: Json[NewBook]) -> Book:
    """Add a book to the shelf.

    The shelf gives it the next free id.
    """
    return shelf.add(new)


async def replace_book(shelf: State[Shelf], book_id: Path[int], new: Json[NewBook]) -> Book:
    """Replace a book."""
    shelf.get(book_id)  # 404 unless it exists
    book = Book(book_id, new.title, new.author, new.year)
    shelf.books[book_id] = book
    return book


async def delete_book(shelf: State[Shelf], book_id: Path[int]) -> None:
    """Take a book off the shelf."""
    del shelf.books[shelf.get(book_id).id]


def create_app(settings: Settings | None = None) -> Router:
    settings = settings or Settings.from_env()
    missing = {404: "no book has this id"}
    router = (
        Router()
        .middleware(LoggerMiddleware(format=settings.log_format))
        .state(Shelf())
        .get("/", index, include_in_schema=False)
        .get("/health", health, include_in_schema=False)
        .get("/books", list_books, tags=["books"])
        .post("/books", create_book, status=201, tags=["books"])
        .get("/books/{book_id}", get_book, tags=["books"], responses=missing)
        .put("/books/{book_id}", replace_book, tags=["books"], responses=missing)
        .delete("/books/{book_id}", delete_book, status=204, tags=["books"], responses=missing)
        .openapi(
            title="Bookshelf",
            version="1.0.0",
            description="The books on a shelf: list, add, replace and remove them.",
        )
    )
    if settings.metrics:
        router.metrics()  # GET /metrics, for Prometheus
    return router


if __name__ == "__main__":
    Server(create_app(), "127.0.0.1:3000").run()
