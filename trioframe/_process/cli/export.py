"""``trioframe openapi MODULE:ATTR``: the application's OpenAPI document, printed or written
to a file, without serving it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..._app import openapi_document
from ..._errors import ConfigurationError
from ..errors import StartupFailure
from ..load import load_router

__all__ = ["export_openapi"]

DEFAULT_VERSION = "0.1.0"


def export_openapi(args: argparse.Namespace) -> int:
    """The ``openapi`` command; raises ``StartupFailure`` for what the user can fix."""
    router = load_router(args.target)
    served = router.openapi_document
    title = args.title or (served.title if served else args.target.partition(":")[0])
    version = args.api_version or (served.version if served else DEFAULT_VERSION)
    try:
        document = openapi_document(
            router,
            title=title,
            version=version,
            description=served.description if served else None,
            servers=served.servers if served else None,
        )
    except ConfigurationError as error:
        raise StartupFailure(str(error)) from None
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise StartupFailure(f"cannot write {args.output}: {error}") from None
    return 0
