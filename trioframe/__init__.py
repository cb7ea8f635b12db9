"""trioframe: a trio-native async web framework with its own HTTP server.

Everything public is re-exported here explicitly; ``trioframe.testing`` is the only other
public module.
"""

from http import HTTPStatus as StatusCode

from ._errors import BadRequest as BadRequest
from ._errors import ConfigurationError as ConfigurationError
from ._errors import Conflict as Conflict
from ._errors import Error as Error
from ._errors import Forbidden as Forbidden
from ._errors import InternalServerError as InternalServerError
from ._errors import MethodNotAllowed as MethodNotAllowed
from ._errors import NotFound as NotFound
from ._errors import PayloadTooLarge as PayloadTooLarge
from ._errors import TooManyRequests as TooManyRequests
from ._errors import Unauthorized as Unauthorized
from ._errors import UnsupportedMediaType as UnsupportedMediaType
from ._errors import ValidationError as ValidationError
from ._http.headers import Headers as Headers
from ._http.method import Method as Method
from ._http.url import Uri as Uri
from ._request import Extensions as Extensions
from ._request import Request as Request
from ._response import Response as Response
from ._response import ServerSentEvent as ServerSentEvent
from ._routing import Router as Router
from ._server.config import ServerConfig as ServerConfig
from ._server.serve import Server as Server

__version__ = "0.2.4"

__all__ = [
    "BadRequest",
    "ConfigurationError",
    "Conflict",
    "Error",
    "Extensions",
    "Forbidden",
    "Headers",
    "InternalServerError",
    "Method",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "Request",
    "Response",
    "Router",
    "Server",
    "ServerConfig",
    "ServerSentEvent",
    "StatusCode",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "Uri",
    "ValidationError",
    "__version__",
]
