"""The typed endpoint on FastAPI: ``POST /record`` takes and returns the pydantic v2 model of
``starlette_pydantic_app``, answered 201. Served by Uvicorn (bench/instructions.py).

Import path from the repository root: bench.apps.fastapi_app:app
"""

from __future__ import annotations

from fastapi import FastAPI

from bench.apps.starlette_pydantic_app import Record

app = FastAPI()


@app.post("/record", status_code=201)
async def record(value: Record) -> Record:
    return value
