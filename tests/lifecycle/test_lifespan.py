"""``Router.lifespan`` under ``TestClient``: order, state from the yielded value, the app
nursery, failures while entering, and the startup type check."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, Self

import pytest
import trio

from trioframe import ConfigurationError, FromRequest, Next, Request, Response, Router, State
from trioframe.testing import TestClient


class Db:
    def __init__(self, name: str = "db") -> None:
        self.name = name


class Cache:
    pass


class Pool:
    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def recording(log: list[str], name: str) -> Any:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        log.append(f"enter {name}")
        try:
            yield
        finally:
            log.append(f"exit {name}")

    return lifespan


async def test_lifespans_enter_in_order_and_exit_in_reverse_nested_routers_included() -> None:
    log: list[str] = []
    inner = Router().lifespan(recording(log, "inner"))
    router = (
        Router()
        .lifespan(recording(log, "first"))
        .nest("/api", inner)
        .lifespan(recording(log, "second"))
    )
    async with TestClient(router):
        assert log == ["enter first", "enter second", "enter inner"]
    assert log[3:] == ["exit inner", "exit second", "exit first"]


async def test_a_router_nested_twice_enters_its_lifespan_once() -> None:
    log: list[str] = []
    shared = Router().lifespan(recording(log, "shared"))
    async with TestClient(Router().nest("/a", shared).nest("/b", shared)):
        assert log == ["enter shared"]
    assert log == ["enter shared", "exit shared"]


async def test_the_yielded_value_is_state() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Db]:
        yield Db("primary")

    async def name(db: State[Db]) -> Response:
        return Response.text(db.name)

    async with TestClient(Router().lifespan(lifespan).get("/", name)) as client:
        assert (await client.get("/")).text == "primary"


async def test_a_yielded_tuple_registers_each_item() -> None:
    db, cache = Db(), Cache()

    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[tuple[Db, Cache], None]:
        yield db, cache

    async def both(d: State[Db], c: State[Cache]) -> Response:
        return Response.json([d is db, c is cache])

    async with TestClient(Router().lifespan(lifespan).get("/", both)) as client:
        assert (await client.get("/")).json() == [True, True]


async def test_a_context_manager_class_annotated_with_its_value_type() -> None:
    class Connect:
        async def __aenter__(self) -> Db:
            return Db("from a class")

        async def __aexit__(
            self,
            kind: type[BaseException] | None,
            exc: BaseException | None,
            tb: TracebackType | None,
        ) -> None:
            return None

    def lifespan() -> AbstractAsyncContextManager[Db]:
        return Connect()

    async def name(db: State[Db]) -> str:
        return db.name

    async with TestClient(Router().lifespan(lifespan).get("/", name)) as client:
        assert (await client.get("/")).text == "from a class"


async def test_a_context_manager_class_declares_its_value_by_aenter() -> None:
    class Connect:
        async def __aenter__(self) -> Db:
            return Db("from __aenter__")

        async def __aexit__(self, *exc_info: object) -> None:
            return None

    async def name(db: State[Db]) -> str:
        return db.name

    async with TestClient(Router().lifespan(Connect).get("/", name)) as client:
        assert (await client.get("/")).text == "from __aenter__"


async def test_a_context_manager_class_whose_aenter_returns_self_is_its_own_state() -> None:
    async def kind(pool: State[Pool]) -> str:
        return type(pool).__name__

    async with TestClient(Router().lifespan(Pool).get("/", kind)) as client:
        assert (await client.get("/")).text == "Pool"


async def test_a_nested_routers_lifespan_state_is_visible_to_its_routes_only() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Db]:
        yield Db("inner")

    async def name(db: State[Db]) -> str:
        return db.name

    inner = Router().lifespan(lifespan).get("/", name)
    async with TestClient(Router().nest("/api", inner)) as client:
        assert (await client.get("/api")).text == "inner"
    with pytest.raises(ConfigurationError, match="no state of type Db"):
        async with TestClient(Router().nest("/api", Router().lifespan(lifespan)).get("/", name)):
            pass


async def test_background_tasks_run_and_are_cancelled_before_the_lifespan_exits() -> None:
    log: list[str] = []
    ticks = trio.Event()

    async def refresh() -> None:
        try:
            ticks.set()
            await trio.sleep_forever()
        finally:
            log.append("task cancelled")

    @asynccontextmanager
    async def lifespan(nursery: trio.Nursery) -> AsyncIterator[None]:
        nursery.start_soon(refresh)
        yield
        log.append("exit")

    async with TestClient(Router().lifespan(lifespan)):
        await ticks.wait()
        assert log == []
    assert log == ["task cancelled", "exit"]


async def test_an_exception_while_entering_is_raised_and_the_entered_ones_exit() -> None:
    log: list[str] = []

    @asynccontextmanager
    async def broken() -> AsyncIterator[None]:
        raise RuntimeError("database unreachable")
        yield

    router = Router().lifespan(recording(log, "first")).lifespan(broken)
    router.lifespan(recording(log, "never"))
    with pytest.raises(RuntimeError, match="database unreachable") as info:
        async with TestClient(router):
            pass  # pragma: no cover
    assert any("broken" in note for note in info.value.__notes__)
    assert log == ["enter first", "exit first"]


async def test_state_that_no_lifespan_declares_fails_at_startup() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Cache]:
        yield Cache()

    async def name(db: State[Db]) -> str:
        return db.name  # pragma: no cover

    entered: list[str] = []
    router = Router().lifespan(recording(entered, "x")).lifespan(lifespan).get("/", name)
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pass  # pragma: no cover
    message = str(info.value)
    assert "parameter 'db': no state of type Db is registered" in message
    assert "register one with Router.state(...)" in message  # what to do
    assert "AsyncIterator[Db]" in message
    assert entered == []  # refused when frozen, before any lifespan runs


@pytest.mark.parametrize(
    ("yielded", "message"),
    [
        (Cache(), "yielded a Cache where its annotation declares Db"),
        (None, "yielded a NoneType where its annotation declares Db"),
    ],
)
async def test_a_yielded_value_of_the_wrong_type_fails_at_startup(
    yielded: object, message: str
) -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Db]:
        yield yielded  # type: ignore[misc]

    with pytest.raises(ConfigurationError, match=message):
        async with TestClient(Router().lifespan(lifespan)):
            pass  # pragma: no cover


async def test_a_value_yielded_by_an_annotation_of_none_fails_at_startup() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        yield Db()  # type: ignore[misc]

    with pytest.raises(ConfigurationError, match=r"annotate it -> AsyncIterator\[Db\]"):
        async with TestClient(Router().lifespan(lifespan)):
            pass  # pragma: no cover


# -- lifespans without a return annotation: the type of what they yield ------------------------
@asynccontextmanager
async def open_db():  # type: ignore[no-untyped-def]  # written the common way
    yield Db("unannotated")


async def db_name(db: State[Db]) -> str:
    return db.name


async def test_an_unannotated_lifespans_value_is_state() -> None:
    async def via_request(request: Request) -> str:
        return request.state(Db).name

    router = Router().lifespan(open_db).get("/", db_name).get("/request", via_request)
    async with TestClient(router) as client:
        assert (await client.get("/")).text == "unannotated"
        assert (await client.get("/request")).text == "unannotated"


async def test_an_unannotated_lifespan_registers_each_item_of_a_tuple() -> None:
    db, cache = Db(), Cache()

    @asynccontextmanager
    async def both(nursery: trio.Nursery):  # type: ignore[no-untyped-def]
        yield db, cache

    @asynccontextmanager
    async def nothing():  # type: ignore[no-untyped-def]
        yield

    async def read(d: State[Db], c: State[Cache]) -> Response:
        return Response.json([d is db, c is cache])

    router = Router().lifespan(nothing).lifespan(both).get("/", read)
    async with TestClient(router) as client:
        assert (await client.get("/")).json() == [True, True]


async def test_an_unannotated_context_manager_class_registers_what_it_enters_as() -> None:
    class Connect:
        async def __aenter__(self):  # type: ignore[no-untyped-def]
            return Db("from a class")

        async def __aexit__(self, *exc_info: object) -> None:
            return None

    async with TestClient(Router().lifespan(Connect).get("/", db_name)) as client:
        assert (await client.get("/")).text == "from a class"


async def test_router_state_after_an_unannotated_lifespan_of_another_type_is_found() -> None:
    @asynccontextmanager
    async def open_cache():  # type: ignore[no-untyped-def]
        yield Cache()

    router = Router().lifespan(open_cache).state(Db("registered")).get("/", db_name)
    async with TestClient(router) as client:
        assert (await client.get("/")).text == "registered"


async def test_an_unannotated_lifespan_of_another_type_fails_after_entering_and_exits() -> None:
    """The check runs once the lifespans have entered, before the client is handed out; the
    message names the handler, the parameter and what the lifespans yielded; every lifespan
    entered exits."""
    log: list[str] = []

    @asynccontextmanager
    async def open_cache():  # type: ignore[no-untyped-def]
        log.append("enter cache")
        try:
            yield Cache()
        finally:
            log.append("exit cache")

    router = Router().lifespan(recording(log, "first")).lifespan(open_cache).get("/", db_name)
    with pytest.raises(ConfigurationError) as info:
        async with TestClient(router):
            pytest.fail("the client was handed out")  # pragma: no cover
    message = str(info.value)
    assert "db_name, parameter 'db': no state of type Db is registered" in message
    assert "open_cache yielded a Cache" in message
    assert "Yield a Db from one of those lifespans, or register one" in message
    assert log == ["enter first", "enter cache", "exit cache", "exit first"]


async def plain_generator() -> AsyncIterator[None]:
    yield


def two_parameters(a: object, b: object) -> AbstractAsyncContextManager[None]:
    raise AssertionError("never called")  # pragma: no cover


def returns_nothing() -> None:
    return None


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (plain_generator, "decorate it with @asynccontextmanager"),
        (two_parameters, "takes nothing or one positional parameter"),
        (returns_nothing, "should be AsyncIterator"),
    ],
)
async def test_functions_that_cannot_be_lifespans_fail_at_startup(
    function: Any, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        async with TestClient(Router().lifespan(function)):
            pass  # pragma: no cover


def test_registering_something_not_callable_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="must be callable"):
        Router().lifespan(42)  # type: ignore[arg-type]


async def test_lifespan_works_as_a_decorator() -> None:
    router = Router()

    @router.lifespan()
    @asynccontextmanager
    async def lifespan() -> AsyncIterator[Db]:
        yield Db("decorated")

    async def name(db: State[Db]) -> str:
        return db.name

    async with TestClient(router.get("/", name)) as client:
        assert (await client.get("/")).text == "decorated"


class CurrentDb(FromRequest):
    """A dependency that reads a lifespan's value with ``request.state``."""

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    async def from_request(cls, request: Request) -> CurrentDb:
        return cls(request.state(Db).name)


async def current_db_name(db: CurrentDb) -> str:
    return db.name


async def test_request_state_finds_a_lifespans_value_from_middleware_and_dependencies() -> None:
    @asynccontextmanager
    async def open_db() -> AsyncIterator[Db]:
        yield Db("from the lifespan")

    seen: list[str] = []

    async def note_db(request: Request, next: Next) -> Response:
        seen.append(request.state(Db).name)
        return await next(request)

    router = Router().lifespan(open_db).middleware(note_db).get("/", current_db_name)
    async with TestClient(router) as client:
        assert (await client.get("/")).text == "from the lifespan"
        assert (await client.get("/missing")).status_code == 404  # unrouted: root's state
    assert seen == ["from the lifespan", "from the lifespan"]


class DbName(FromRequest):
    """A dependency that takes a lifespan's value with ``State[Db]``."""

    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    async def from_request(cls, request: Request, db: State[Db]) -> DbName:
        return cls(db.name)


async def test_a_dependency_reads_an_unannotated_lifespans_value() -> None:
    async def name(found: DbName) -> str:
        return found.name

    async with TestClient(Router().lifespan(open_db).get("/", name)) as client:
        assert (await client.get("/")).text == "unannotated"
