"""Tutorial step 2: routes with typed extractors (``Path[int]``, ``Query[...]``) and typed
returns, over a fixed list of books."""

from typing import Annotated

import attrs
from annotated_types import Ge, Le
from trioframe import Error, Path, Query, Router, Server


@attrs.frozen
class Book:
    id: int
    title: str
    author: str
    year: int


BOOKS = {
    1: Book(1, "A Wizard of Earthsea", "Ursula K. Le Guin", 1968),
    2: Book(2, "The Left Hand of Darkness", "Ursula K. Le Guin", 1969),
    3: Book(3, "Kindred", "Octavia E. Butler", 1979),
}

router = Router()


@router.get("/")
async def index() -> str:
    return "Welcome to the bookshelf!"


@router.get("/books")
async def list_books(
    author: Query[str | None] = None,
    limit: Query[Annotated[int, Ge(1), Le(100)]] = 20,
) -> list[Book]:
    books = [book for book in BOOKS.values() if author is None or book.author == author]
    return books[:limit]


@router.get("/books/{book_id}")
async def get_book(book_id: Path[int]) -> Book:
    book = BOOKS.get(book_id)
    if book is None:
        raise Error.not_found(f"book {book_id}")
    return book


if __name__ == "__main__":
    Server(router, "127.0.0.1:3000").run()
