"""The package as a whole: the public namespace, the version, the layer rules."""

from __future__ import annotations

import ast
import pathlib
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


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _modules(*parts: str) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for part in parts:
        target = PACKAGE / part
        files.extend(sorted(target.rglob("*.py")) if target.is_dir() else [target])
    return files


def test_sans_io_layers_never_import_trio() -> None:
    for path in _modules("_http", "_protocol", "_routing", "_extract", "_errors.py"):
        assert "trio" not in _imports(path), f"{path} imports trio"


def test_only_the_server_package_touches_sockets() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if "_server" not in p.parts]
    for path in outside:
        used = _imports(path)
        assert not used & {"socket", "ssl", "selectors"}, f"{path} imports {used}"


def test_modules_stay_small() -> None:
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        assert lines <= 450, f"{path} has {lines} lines"
