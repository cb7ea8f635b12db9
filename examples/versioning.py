"""API versioning with a custom extractor.

What it shows: ``ApiVersion``, a ``FromRequest`` subclass (with a plain, synchronous
``from_request`` classmethod) that works out which API version a request asks for:

1. the ``api-version`` header, else
2. the ``version`` query parameter, else
3. the path prefix: ``/v1/...`` is ``"1.0"``, ``/v2/...`` is ``"2.0"``, else
4. ``"1.0"``.

``"1"``, ``"1.0"``, ``"v1"`` and the same spellings of 2 are understood (case and surrounding
spaces do not matter); any other version asked for is answered 400 by
raising ``Error.bad_request`` inside ``from_request``, before the handler runs. The same
handlers serve ``/items``, ``/v1/items`` and ``/v2/items`` (and ``/items/{item_id}`` under
each prefix) and shape their payload by version: v1 sends flat items with a float price, v2
wraps them in ``data`` with a ``meta`` count and a price object in cents. Every answer
carries an ``api-version`` header saying which version it is.

Run it with ``python examples/versioning.py`` (serves on 127.0.0.1:3000; the ``PORT``
environment variable picks another port), then for example::

    curl localhost:3000/items
    curl localhost:3000/v2/items
    curl -H 'api-version: 2' localhost:3000/items/1
    curl 'localhost:3000/items?version=3'          # 400
"""

from __future__ import annotations

import logging
import os
from typing import Any

import attrs

from trioframe import Error, FromRequest, Path, Request, Response, Router, Server

DEFAULT_VERSION = "1.0"
#: Every spelling a client may use, mapped to the version it means.
SUPPORTED = {"1": "1.0", "1.0": "1.0", "2": "2.0", "2.0": "2.0"}
PATH_PREFIXES = {"/v1/": "1.0", "/v2/": "2.0"}


@attrs.frozen
class ApiVersion(FromRequest):
    """The API version a request asks for (``"1.0"`` or ``"2.0"``)."""

    value: str

    @classmethod
    def from_request(cls, request: Request) -> ApiVersion:
        asked = request.header("api-version")
        if asked is None:
            asked = request.query("version")
        if asked is None:
            for prefix, by_path in PATH_PREFIXES.items():
                if request.path.startswith(prefix):
                    return cls(by_path)
            return cls(DEFAULT_VERSION)
        version = SUPPORTED.get(asked.strip().lower().removeprefix("v"))
        if version is None:
            raise Error.bad_request(
                f"unsupported API version {asked!r}; supported versions are 1.0 and 2.0"
            )
        return cls(version)


@attrs.frozen
class Item:
    id: int
    name: str
    price_cents: int


CATALOGUE = {1: Item(1, "Widget", 999), 2: Item(2, "Gadget", 2450)}


def render(item: Item, version: ApiVersion) -> dict[str, Any]:
    if version.value == "2.0":
        return {
            "id": item.id,
            "name": item.name,
            "price": {"amount_cents": item.price_cents, "currency": "EUR"},
        }
    return {"id": item.id, "name": item.name, "price": item.price_cents / 100}


def answer(payload: dict[str, Any], version: ApiVersion) -> Response:
    return Response.json({"version": version.value, **payload}).with_header(
        "api-version", version.value
    )


async def list_items(version: ApiVersion) -> Response:
    items = [render(item, version) for item in CATALOGUE.values()]
    if version.value == "2.0":
        return answer({"data": items, "meta": {"count": len(items)}}, version)
    return answer({"items": items}, version)


async def get_item(item_id: Path[int], version: ApiVersion) -> Response:
    item = CATALOGUE.get(item_id)
    if item is None:
        raise Error.not_found(f"item {item_id}")
    if version.value == "2.0":
        return answer({"data": render(item, version)}, version)
    return answer({"item": render(item, version)}, version)


router = Router()
for prefix in ("", "/v1", "/v2"):
    router.get(f"{prefix}/items", list_items).get(
        f"{prefix}/items/{{item_id}}", get_item, responses={404: "no item has this id"}
    )

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    Server(router, ("127.0.0.1", int(os.environ.get("PORT", "3000")))).run()
