"""Tutorial step 3: a JSON API. Books are created, replaced and deleted with validated JSON
bodies; the shelf is application state, and ``create_app()`` builds a fresh app with its own
shelf. ``trioframe run app:create_app`` serves it."""

from typing import Annotated

import attrs
from annotated_types import Ge, Le, MaxLen, MinLen
from trioframe import Error, Json, Path, Query, Router, Server, State

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
    return "Welcome to the bookshelf!"


async def list_books(
    shelf: State[Shelf],
    author: Query[str | None] = None,
    limit: Query[Annotated[int, Ge(1), Le(100)]] = 20,
) -> list[Book]:
    books = [book for book in shelf.books.values() if author is None or book.author == author]
    return books[:limit]


async def get_book(shelf: State[Shelf], book_id: Path[int]) -> Book:
    return shelf.get(book_id)


async def create_book(shelf: State[Shelf], new: Json[NewBook]) -> Book:
    return shelf.add(new)


async def replace_book(shelf: State[Shelf], book_id: Path[int], new: Json[NewBook]) -> Book:
    shelf.get(book_id)  # 404 unless it exists
    book = Book(book_id, new.title, new.author, new.year)
    shelf.books[book_id] = book
    return book


async def delete_book(shelf: State[Shelf], book_id: Path[int]) -> None:
    del shelf.books[shelf.get(book_id).id]


def create_app() -> Router:
    return (
        Router()
        .state(Shelf())
        .get("/", index)
        .get("/books", list_books)
        .post("/books", create_book, status=201)
        .get("/books/{book_id}", get_book)
        .put("/books/{book_id}", replace_book)
        .delete("/books/{book_id}", delete_book, status=204)
    )


if __name__ == "__main__":
    Server(create_app(), "127.0.0.1:3000").run()
