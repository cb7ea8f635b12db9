"""The OpenAPI documents of the example applications, kept in ``golden/``: a change to what a
document says shows here as a diff to review. ``TRIOFRAME_UPDATE_GOLDEN=1 pytest
tests/openapi/test_golden.py`` writes them again after an intended change."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

import pytest
from openapi_spec_validator import validate

from trioframe import openapi_document

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"
GOLDEN = pathlib.Path(__file__).with_name("golden")
APPS = ["rest_api", "upload", "hello", "versioning", "middleware", "todo_api", "auth", "limits"]


def document_of(name: str) -> object:
    spec = importlib.util.spec_from_file_location(f"golden_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        document = openapi_document(module.router, title=name, version="1.0.0")
    finally:
        del sys.modules[spec.name]
    return json.loads(json.dumps(document))  # as served: tuples become lists


@pytest.mark.parametrize("name", APPS)
def test_the_example_s_document_is_its_golden_one(name: str) -> None:
    document = document_of(name)
    validate(document)  # type: ignore[arg-type]
    path = GOLDEN / f"{name}.json"
    if os.environ.get("TRIOFRAME_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    assert document == json.loads(path.read_text()), f"{path} differs: see the module docstring"
