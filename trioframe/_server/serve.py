"""``Server``: listeners, the accept loop, the connection limit and graceful shutdown.

Structure: ``serve()`` owns a nursery holding the accept loops and one task per connection
(each served by ``streams.serve_stream``: TLS, the protocol's connection, its own nursery). ``shutdown()`` flips a flag and
wakes the shutdown task, which stops accepting, closes idle connections, waits up to
``shutdown_timeout`` for in-flight requests, then cancels what is left.

At ``max_connections`` an accept loop stops accepting; once a client waits in the listen
queue, one connection that is only waiting for its client is closed to make room for it
(``slots.py`` says which).

``run()`` makes the calling program a whole process (signals, exit statuses, worker
processes): that part lives in the processes ring above this package, which registers it
here (``register_process_entry``).
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any

import trio

from .._app import AppPolicy, freeze
from .._errors import ConfigurationError
from .._routing.router import Router
from .._websocket.accept import WebSocketPolicy
from .address import format_peer, parse_address
from .config import ServerConfig
from .lifespan import Lifecycle
from .slots import Eviction
from .state import ServingState
from .streams import serve_stream
from .tls import server_context

__all__ = ["FINAL_GRACE", "Server", "register_process_entry"]

log = logging.getLogger("trioframe")

_ACCEPT_CAPACITY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
FINAL_GRACE = 1.0  # after cancelling late requests, time left to send their 503s
_AT_CAPACITY = "the server is at its connection limit"
#: Every connection task's name (a constant: trio would format a new string for each task)
_TASK_NAME = "trioframe: connection"
#: At capacity, when every evictable connection had unread bytes: how soon to look again if
#: none of them says it waits again (``ServingState.slot_evictable``) before.
_RECHECK_AFTER_SKIPPING = 0.05


class Server:
    """Serves a ``Router`` over HTTP/1.1.

    ``Server(router, "127.0.0.1:3000")``; ``addr`` may also be ``"[::1]:3000"`` or a
    ``(host, port)`` tuple; port 0 picks a free port. The router is frozen (routes and
    handler plans built, ``ConfigurationError`` raised) when serving starts.
    """

    def __init__(
        self,
        router: Router,
        addr: str | tuple[str, int] = "127.0.0.1:3000",
        config: ServerConfig | None = None,
    ) -> None:
        self.router = router
        self.host, self.port = parse_address(addr)
        self.config = config or ServerConfig()
        self._state: ServingState | None = None
        self._shutdown_requested = trio.Event() if _in_trio() else None
        self._pending_shutdown = False
        self._lifecycle: Lifecycle | None = None

    # -- building the shared state --------------------------------------------------------
    def _prepare(self) -> ServingState:
        if self._state is None:
            protocols = self.config.protocols
            if protocols.http2:
                _require_h2()
            limits = self.config.app_limits
            websocket = WebSocketPolicy(
                allowed_origins=limits.websocket_allowed_origins,
                compression=limits.websocket_compression,
                max_message_size=limits.websocket_max_message_size,
            )
            app = freeze(
                self.router,
                AppPolicy(limits.max_body_size, limits.max_json_size, websocket),
            )
            context = None
            if protocols.tls is not None:
                context = server_context(protocols.tls, http2=protocols.http2)
            self._state = ServingState.create(app, self.config, context)
        return self._state

    async def handle_stream(self, stream: trio.abc.Stream, client: tuple[str, int] | None) -> None:
        """Serve one already-connected stream until it closes, exactly as an accepted socket
        is served (TLS handshake included when the config asks for TLS); the test client uses
        this with an in-memory stream. Cancellation closes the stream. A failure in the
        connection code itself is logged and ends this connection only: it never reaches the
        caller."""
        await serve_stream(self._prepare(), stream, client)

    # -- serving ------------------------------------------------------------------------------
    async def serve(
        self,
        *,
        sockets: Sequence[socket.socket] | None = None,
        task_status: trio.TaskStatus[list[tuple[str, int]]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Bind, report the bound ``(host, port)`` addresses to ``task_status``, and serve
        until cancelled or shut down.

        ``sockets``: serve on these bound, listening TCP sockets instead of binding the
        server's address (sockets handed over by a process manager, such as systemd's socket
        activation or trioframe's own worker supervisor). They are closed when serving ends.

        The router's lifespans are entered after binding and before the first connection is
        accepted (so ``await nursery.start(server.serve)`` returns with their state ready),
        and exited after graceful shutdown has drained the connections and the app
        nursery's tasks have finished.

        Raises ``OSError`` when the address cannot be bound, ``ConfigurationError`` for a
        broken router (a ``State[T]`` that only lifespans without a return annotation could
        provide is checked once they have entered: then they exit first), and what a lifespan
        raised while entering, as it is. A task of the app nursery that raises is logged at
        once with its traceback and begins a graceful shutdown, after which ``serve()``
        raises that exception as it is (not in a group). Returns ``None``
        after a graceful shutdown. Installs no signal handlers. Cancelling it closes every
        connection at once (no grace period); the lifespans then exit under that
        cancellation."""
        if self.config.processes.workers > 1:
            raise ConfigurationError(
                "workers > 1 needs worker processes: use Server.run() or the command line "
                "(serve() runs in the calling process)"
            )
        state = self._prepare()
        state.renew_shutdown()
        self._shutdown_requested = trio.Event()
        if self._pending_shutdown:
            self._shutdown_requested.set()
        if sockets is None:
            listeners = await trio.open_tcp_listeners(self.port, host=self.host)
        else:
            listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(s)) for s in sockets]
        lifecycle = self._lifecycle = Lifecycle(
            state.app.lifespans, state.app.check_late_state, state.background, self.shutdown
        )
        try:
            addresses = [_sockname(listener) for listener in listeners]
            scheme = "http" if self.config.protocols.tls is None else "https"
            limiter = trio.Semaphore(self.config.limits.max_connections)
            async with lifecycle.running(), trio.open_nursery() as connections:
                async with trio.open_nursery() as acceptors:
                    for listener in listeners:
                        acceptors.start_soon(
                            self._accept_loop, listener, limiter, state, connections
                        )
                    for host, port in addresses:
                        log.info("trioframe serving on %s://%s", scheme, format_peer((host, port)))
                    task_status.started(addresses)
                    await self._shutdown_requested.wait()
                    acceptors.cancel_scope.cancel()
                await _close_all(listeners)
                await self._drain(state, connections)
        finally:  # also when cancelled or failing: the port is released
            await _close_all(listeners)
        self._pending_shutdown = False  # the server may serve again

    async def trioframe(
        self, *, task_status: trio.TaskStatus[list[tuple[str, int]]] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The same as :meth:`serve`: the serving method named after the framework."""
        await self.serve(task_status=task_status)

    async def _accept_loop(
        self,
        listener: trio.SocketListener,
        limiter: trio.Semaphore,
        state: ServingState,
        connections: trio.Nursery,
    ) -> None:
        while True:
            try:
                limiter.acquire_nowait()  # under the limit: no extra trip through the scheduler
            except trio.WouldBlock:
                await _wait_for_slot(listener, limiter, state)
            try:
                stream = await listener.accept()
            except OSError as exc:
                limiter.release()
                if exc.errno in _ACCEPT_CAPACITY_ERRNOS:
                    log.error("accept failed (%s); retrying in 100 ms", exc)
                    await trio.sleep(0.1)
                    continue
                raise
            except BaseException:
                limiter.release()
                raise
            connections.start_soon(self._serve_socket, stream, limiter, state, name=_TASK_NAME)

    async def _serve_socket(
        self, stream: trio.SocketStream, limiter: trio.Semaphore, state: ServingState
    ) -> None:
        try:
            stream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
            client = _client_address(stream.socket.getpeername())
        except OSError:  # the peer is already gone
            await trio.aclose_forcefully(stream)
            limiter.release()
            return
        try:
            # (``handle_stream``'s work without its coroutine: one frame fewer for as long
            # as the connection lasts)
            await serve_stream(state, stream, client)
        finally:
            limiter.release()

    async def _drain(self, state: ServingState, connections: trio.Nursery) -> None:
        """Graceful part of shutdown: the ``Shutdown`` signal is set and event streams end,
        idle connections close now, busy ones get until ``shutdown_timeout``; then late
        requests are cancelled (503 where possible). The requests' background tasks get
        until the same deadline (the lifecycle cancels those still running after it)."""
        state.begin_shutdown()
        for connection in list(state.connections):
            connection.begin_shutdown()
        deadline = trio.current_time() + self.config.timeouts.shutdown_timeout
        with trio.move_on_at(deadline):
            await state.wait_all_closed()
        for connection in list(state.connections):
            connection.cancel_for_shutdown()
        with trio.move_on_after(FINAL_GRACE):
            await state.wait_all_closed()
        with trio.move_on_at(deadline):  # then the lifecycle cancels what still runs
            await state.background.wait_idle()
        connections.cancel_scope.cancel()

    def shutdown(self) -> None:
        """Start a graceful shutdown (from any task of the serving trio run): stop accepting,
        close idle keep-alive connections, let in-flight requests finish within
        ``shutdown_timeout`` (their responses say ``Connection: close``), then cancel what is
        left. ``serve()`` returns when it is done. Not async: it only signals."""
        self._pending_shutdown = True
        if self._shutdown_requested is not None:
            self._shutdown_requested.set()

    # -- blocking convenience -----------------------------------------------------------------
    def run(self) -> None:
        """Serve in a new trio run until SIGINT or SIGTERM, then shut down gracefully and
        return (a second signal exits the process at once). A server that cannot start (an
        address in use or not permitted, a ``ConfigurationError``, a lifespan failing while
        entering) is logged in one line, the one ``trioframe run`` prints (its traceback at
        DEBUG level), and exits with status 3 (``SystemExit(3)``); a task of the app nursery
        that raised (its traceback logged, the server shut down gracefully) exits with status
        1 (``SystemExit(1)``). When the program has configured no logging, trioframe's own
        lines (``trioframe serving on http://...``, shutdown) go to stderr.

        With ``config.workers`` above 1 this process becomes the supervisor of that many
        worker processes (see docs/deployment.md): the router must be a module-level name,
        which each worker imports again. It returns after SIGINT/SIGTERM has drained them
        all; ``SystemExit(3)`` when a worker failed to start, ``SystemExit(1)`` after a
        second signal."""
        run_process = _process_entry[0]  # registered when trioframe is imported
        run_process(self)


#: What ``Server.run()`` calls (one entry, once registered).
_process_entry: list[Callable[[Server], None]] = []


def register_process_entry(entry: Callable[[Server], None]) -> None:
    """Make ``entry`` what ``Server.run()`` calls to run a server as the whole process. The
    processes ring (``trioframe._process``), which this package never imports, registers
    its entry when it is imported, and the public namespace imports it: the entry is in place
    before any ``Server`` can run."""
    _process_entry[:] = [entry]


async def _wait_for_slot(
    listener: trio.SocketListener, limiter: trio.Semaphore, state: ServingState
) -> None:
    """At ``max_connections``: wait for a connection slot. Meanwhile, once a client waits to
    be accepted, close one connection for it: one waiting for its client, never one with a
    request in progress or unread bytes (the policy is in ``slots.py``); when none can go,
    wait until one can."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_evict_for_waiting_client, listener, state)
        await limiter.acquire()
        nursery.cancel_scope.cancel()


async def _evict_for_waiting_client(listener: trio.SocketListener, state: ServingState) -> None:
    await trio.lowlevel.wait_readable(listener.socket)  # a client is in the accept queue
    while (eviction := state.make_room(_AT_CAPACITY)) is not Eviction.DONE:
        if eviction is Eviction.NONE:
            await state.wait_for_evictable()
        else:  # every candidate had unread bytes: each reads them now, and most say when
            # they wait again, but not a TLS handshake in progress: look again soon anyway
            with trio.move_on_after(_RECHECK_AFTER_SKIPPING):
                await state.wait_for_evictable()


async def _close_all(listeners: list[trio.SocketListener]) -> None:
    for listener in listeners:
        await trio.aclose_forcefully(listener)


def _require_h2() -> None:
    """HTTP/2 needs the ``http2`` extra: say so at startup, not at the first connection."""
    try:
        import h2  # noqa: F401
    except ImportError:
        raise ConfigurationError("http2=True needs h2: pip install 'trioframe[http2]'") from None


def _client_address(peer: Any) -> tuple[str, int] | None:
    """A TCP peer's ``(host, port)`` (``None`` for another kind of socket)."""
    return (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else None


def _sockname(listener: trio.SocketListener) -> tuple[str, int]:
    name: Any = listener.socket.getsockname()
    return str(name[0]), int(name[1])


def _in_trio() -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True
