"""Tutorial step 1: the smallest bookshelf. ``trioframe run app:router`` serves it on
http://127.0.0.1:3000, and so does ``python app.py``."""

from trioframe import Router, Server

router = Router()


@router.get("/")
async def index() -> str:
    return "Welcome to the bookshelf!"


if __name__ == "__main__":
    Server(router, "127.0.0.1:3000").run()
