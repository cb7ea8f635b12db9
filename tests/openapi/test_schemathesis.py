"""schemathesis against example applications over loopback: every response the app sends for
a generated request matches what its OpenAPI document says (status codes, content types,
response schemas), and no request makes it fail with a 5xx. Bounded: a few examples per
operation, one run per app."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import sys

import pytest
import trio

from ..loopback._support import serving

pytestmark = pytest.mark.loopback

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
SCHEMATHESIS = shutil.which("schemathesis", path=str(pathlib.Path(sys.executable).parent))
CHECKS = "status_code_conformance,content_type_conformance,response_schema_conformance,not_a_server_error"


def example_router(name: str) -> object:
    spec = importlib.util.spec_from_file_location(f"schemathesis_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    router = module.router
    if router.openapi_document is None:
        router.openapi(title=name, version="1")
    return router


@pytest.mark.parametrize(
    "name",
    ["rest_api", "upload", "hello", "versioning", "middleware", "todo_api", "auth", "limits"],
)
async def test_the_example_answers_as_its_document_says(name: str, tmp_path: pathlib.Path) -> None:
    assert SCHEMATHESIS is not None, "schemathesis is a test dependency (noxfile.py)"
    with trio.fail_after(120):
        async with serving(example_router(name)) as served:  # type: ignore[arg-type]
            done = await trio.run_process(
                [
                    SCHEMATHESIS,
                    "run",
                    f"{served.url}/openapi.json",
                    "--checks",
                    CHECKS,
                    "--max-examples",
                    "25",
                    "--seed",
                    "1",
                    "--no-color",
                ],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                cwd=tmp_path,  # (it keeps a cache directory where it runs)
            )
    output = done.stdout.decode() + done.stderr.decode()
    assert done.returncode == 0, output
    assert "passed" in output
