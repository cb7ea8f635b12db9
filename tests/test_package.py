"""The package as a whole: the public namespace, the version, the layer rules."""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
import types

import trioframe
import trioframe.testing

PACKAGE = pathlib.Path(trioframe.__file__).parent


def test_version() -> None:
    assert trioframe.__version__ == "0.2.4"


def test_py_typed_ships() -> None:
    assert (PACKAGE / "py.typed").exists()


def test_all_is_complete_and_importable() -> None:
    public = {
        name
        for name, value in vars(trioframe).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }  # submodules (testing, middleware) become attributes once imported
    assert set(trioframe.__all__) - {"__version__"} == public
    for name in trioframe.__all__:
        assert getattr(trioframe, name) is not None
    assert trioframe.testing.__all__ == [
        "TestClient",
        "TestHttpClient",
        "WebSocketDisconnected",
        "WebSocketRejected",
        "WebSocketTestSession",
    ]


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imports(name: str) -> set[str]:
    """Every module ``name`` imports, relative imports resolved to absolute names (a
    ``from package import module`` counts the module too)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(
                f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES
            )
    return found


def _import_chain(start: str, forbidden: str) -> list[str] | None:
    """The chain of imports from module ``start`` to the top-level package ``forbidden``,
    following trioframe's own modules transitively (importing a module imports its parent
    packages too; the root package, the public namespace that re-exports everything, is left
    out), or ``None`` when there is none."""
    came_from: dict[str, str] = {}
    queue = [start]
    while queue:
        current = queue.pop()
        for imported in _imports(current):
            parents = [imported.rsplit(".", n)[0] for n in range(1, imported.count("."))]
            for module in [imported, *parents]:
                if module.split(".")[0] == forbidden:
                    chain = [module, current]
                    while chain[-1] in came_from:
                        chain.append(came_from[chain[-1]])
                    return chain[::-1]
                if module in MODULES and module not in came_from and module != start:
                    came_from[module] = current
                    queue.append(module)
    return None


SANS_IO = ("_http", "_protocol", "_routing", "_extract", "_errors", "_proxy", "_codec", "_markers")


def test_sans_io_layers_never_import_trio_even_indirectly() -> None:
    for name in MODULES:
        if name.split(".")[1:2] and name.split(".")[1] in SANS_IO:
            chain = _import_chain(name, "trio")
            assert chain is None, " imports ".join(chain)


def test_the_layer_check_follows_relative_imports() -> None:
    # The planner imports the multipart decoder relatively; the decoder's package must not
    # pull in trio (files.py does file I/O), or the check above would fail through it.
    assert "trioframe._multipart.decoder" in _imports("trioframe._extract.plan")
    assert _import_chain("trioframe._multipart.form", "trio") is not None


def test_only_the_server_package_touches_sockets() -> None:
    # (and the worker supervisor, which binds the sockets its workers inherit)
    for name, path in MODULES.items():
        if "_server" in path.parts or name.startswith("trioframe._process.workers"):
            continue
        used = {module.split(".")[0] for module in _imports(name)}
        assert not used & {"socket", "ssl", "selectors"}, f"{path} imports {used}"


def test_modules_stay_small() -> None:
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        assert lines <= 450, f"{path} has {lines} lines"


def test_the_test_client_without_httpx_names_the_extra() -> None:
    # In a fresh interpreter where httpx cannot be imported: one clear ImportError.
    code = (
        "import sys\n"
        "sys.modules['httpx'] = None  # makes `import httpx` raise ImportError\n"
        "try:\n"
        "    import trioframe.testing\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "pip install 'trioframe[testing]'" in result.stdout, result.stderr


def test_the_header_alias_is_defined_once() -> None:
    defining = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^Header = ", path.read_text(), re.MULTILINE)
    ]
    assert defining == ["_http/headers.py"]


#: A run of tchar punctuation that any spelling of the token grammar (a regex class, a set of
#: characters, a message listing them) carries.
TCHAR_MARK = "^_`|~"
OWN_TCHAR_SETS = {"_http/grammar.py"}


def test_the_token_grammar_is_written_once() -> None:
    spelling = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if TCHAR_MARK in path.read_text()
    }
    assert spelling <= OWN_TCHAR_SETS
    assert "_http/grammar.py" in spelling


# -- the import graph: no module cycle, rooms in rings --------------------------------------------

#: The rings, lowest first: a room (a first-level module or package of trioframe) imports only
#: rooms of its own ring or of lower ones. The public namespace and ``python -m trioframe``
#: sit on top; nothing imports them.
RINGS: dict[str, frozenset[str]] = {
    "ground": frozenset({"_errors", "_http", "_codec", "_version"}),
    "protocols": frozenset({"_protocol", "_proxy"}),
    "app": frozenset(
        {
            "_routing",
            "_extract",
            "_request",
            "_extensions",
            "_stores",
            "_response",
            "_files",
            "_multipart",
            "_websocket",
            "_sessions",
            "_lifespan",
            "_shutdown",
            "_templates",
            "_background",
            "_tracing",
            "middleware",
            "_markers",
            "_body",
            "_chain",
            "_describe",
            "_app",
            "_openapi",
            "_metrics",
        }
    ),
    "server": frozenset({"_server", "testing", "pytest_plugin"}),
    "processes": frozenset({"_process"}),
    "facade": frozenset({"trioframe", "__main__"}),
}
RING_ORDER = {room: rank for rank, rooms in enumerate(RINGS.values()) for room in rooms}


def _room(module: str) -> str:
    """``trioframe._server.http1.connection`` → ``_server``; the root package is its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_imports(name: str) -> set[str]:
    """The trioframe modules ``name`` imports, type-only and function-level imports included:
    for ``from package import name``, the submodule when there is one, else the package."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                found.add(submodule if submodule in MODULES else module)
    return {module for module in found if module in MODULES and module != name}


IMPORTS = {name: _module_imports(name) for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_check_sees_type_only_and_function_level_imports() -> None:
    # The HTTP/1.1 exchange names its reader only under TYPE_CHECKING; the neutral exchange
    # imports the WebSocket session inside a function: both count.
    assert "trioframe._server.http1.reader" in IMPORTS["trioframe._server.http1.exchange"]
    assert "trioframe._server.websocket" in IMPORTS["trioframe._server.exchange"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_between_modules() -> None:
    cycles = _cycles(IMPORTS)
    assert not cycles, "module import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _room_imports() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for name, imported in IMPORTS.items():
        rooms.setdefault(_room(name), set()).update(
            room for room in map(_room, imported) if room != _room(name)
        )
    return rooms


def test_every_room_has_a_ring() -> None:
    rooms = set(map(_room, MODULES))
    assert not rooms - RING_ORDER.keys(), (
        f"rooms without a ring in RINGS: {rooms - RING_ORDER.keys()}"
    )


def test_rooms_import_only_their_own_ring_or_lower_ones() -> None:
    upward = [
        f"{name} ({_ring_of(_room(name))}) imports {module} ({_ring_of(_room(module))})"
        for name, imported in sorted(IMPORTS.items())
        for module in sorted(imported)
        if RING_ORDER.get(_room(module), -1) > RING_ORDER.get(_room(name), len(RINGS))
    ]
    assert not upward, "imports up the rings:\n" + "\n".join(upward)


def _ring_of(room: str) -> str:
    return next((ring for ring, rooms in RINGS.items() if room in rooms), "no ring")


def test_the_rooms_form_a_dag() -> None:
    cycles = _cycles(_room_imports())
    assert not cycles, "room import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)
