"""trioframe: a trio-native async web framework with its own HTTP server.

Everything public is re-exported here explicitly; ``trioframe.testing`` is the only other
public module.
"""

from http import HTTPStatus as StatusCode

from . import _process as _process  # Server.run()'s process entry registers itself
from ._app import App as App
from ._app import freeze as freeze
from ._app import openapi_document as openapi_document
from ._background import BackgroundTasks as BackgroundTasks
from ._chain import Middleware as Middleware
from ._chain import Next as Next
from ._codec.constraints import Bounds as Bounds
from ._describe import RouteInfo as RouteInfo
from ._errors import BadRequest as BadRequest
from ._errors import ConfigurationError as ConfigurationError
from ._errors import Conflict as Conflict
from ._errors import Error as Error
from ._errors import Forbidden as Forbidden
from ._errors import InternalServerError as InternalServerError
from ._errors import MethodNotAllowed as MethodNotAllowed
from ._errors import NotAcceptable as NotAcceptable
from ._errors import NotFound as NotFound
from ._errors import PayloadTooLarge as PayloadTooLarge
from ._errors import StoreUnavailable as StoreUnavailable
from ._errors import TooManyRequests as TooManyRequests
from ._errors import Unauthorized as Unauthorized
from ._errors import UnsupportedMediaType as UnsupportedMediaType
from ._errors import ValidationError as ValidationError
from ._extensions import Extensions as Extensions
from ._extract import Alias as Alias
from ._extract import APIKey as APIKey
from ._extract import BasicCredentials as BasicCredentials
from ._extract import BearerToken as BearerToken
from ._extract import Body as Body
from ._extract import CookieValue as CookieValue
from ._extract import Extension as Extension
from ._extract import Form as Form
from ._extract import FromRequest as FromRequest
from ._extract import HeaderValue as HeaderValue
from ._extract import Json as Json
from ._extract import Path as Path
from ._extract import Query as Query
from ._extract import Realm as Realm
from ._extract import SecurityScheme as SecurityScheme
from ._extract import State as State
from ._extract.params import ParamInfo as ParamInfo
from ._http.accept import Accept as Accept
from ._http.cookies import Cookie as Cookie
from ._http.cookies import CookieJar as CookieJar
from ._http.cookies import CookieJar as Cookies
from ._http.cookies import SameSite as SameSite
from ._http.headers import Headers as Headers
from ._http.method import Method as Method
from ._http.url import Uri as Uri
from ._multipart.decoder import MultipartConfig as MultipartConfig
from ._multipart.files import FileField as FileField
from ._multipart.files import safe_filename as safe_filename
from ._multipart.form import Field as Field
from ._multipart.form import Multipart as Multipart
from ._openapi.pages import docs_routes as docs_routes
from ._request import Request as Request
from ._response import Response as Response
from ._response import ServerSentEvent as ServerSentEvent
from ._routing import Router as Router
from ._server.config import ServerConfig as ServerConfig
from ._server.serve import Server as Server
from ._sessions.session import Session as Session
from ._shutdown import Shutdown as Shutdown
from ._stores import Broadcast as Broadcast
from ._stores import MemoryStore as MemoryStore
from ._stores import RedisStore as RedisStore
from ._stores import Subscription as Subscription
from ._templates import Templates as Templates
from ._version import __version__ as __version__
from ._websocket import Message as Message
from ._websocket import WebSocketClosed as WebSocketClosed
from ._websocket import WebSocketConnection as WebSocketConnection
from .middleware import CompressionMiddleware as CompressionMiddleware
from .middleware import Cors as Cors
from .middleware import CorsMiddleware as CorsMiddleware
from .middleware import CrossOriginProtection as CrossOriginProtection
from .middleware import LoggerMiddleware as LoggerMiddleware
from .middleware import RateLimitMiddleware as RateLimitMiddleware
from .middleware import RequestId as RequestId
from .middleware import RequestIdMiddleware as RequestIdMiddleware
from .middleware import SecurityHeadersMiddleware as SecurityHeadersMiddleware
from .middleware import SessionMiddleware as SessionMiddleware
from .middleware import TimeoutMiddleware as TimeoutMiddleware

__all__ = [
    "APIKey",
    "Accept",
    "Alias",
    "App",
    "BackgroundTasks",
    "BadRequest",
    "BasicCredentials",
    "BearerToken",
    "Body",
    "Bounds",
    "Broadcast",
    "CompressionMiddleware",
    "ConfigurationError",
    "Conflict",
    "Cookie",
    "CookieJar",
    "CookieValue",
    "Cookies",
    "Cors",
    "CorsMiddleware",
    "CrossOriginProtection",
    "Error",
    "Extension",
    "Extensions",
    "Field",
    "FileField",
    "Forbidden",
    "Form",
    "FromRequest",
    "HeaderValue",
    "Headers",
    "InternalServerError",
    "Json",
    "LoggerMiddleware",
    "MemoryStore",
    "Message",
    "Method",
    "MethodNotAllowed",
    "Middleware",
    "Multipart",
    "MultipartConfig",
    "Next",
    "NotAcceptable",
    "NotFound",
    "ParamInfo",
    "Path",
    "PayloadTooLarge",
    "Query",
    "RateLimitMiddleware",
    "Realm",
    "RedisStore",
    "Request",
    "RequestId",
    "RequestIdMiddleware",
    "Response",
    "RouteInfo",
    "Router",
    "SameSite",
    "SecurityHeadersMiddleware",
    "SecurityScheme",
    "Server",
    "ServerConfig",
    "ServerSentEvent",
    "Session",
    "SessionMiddleware",
    "Shutdown",
    "State",
    "StatusCode",
    "StoreUnavailable",
    "Subscription",
    "Templates",
    "TimeoutMiddleware",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "Uri",
    "ValidationError",
    "WebSocketClosed",
    "WebSocketConnection",
    "__version__",
    "docs_routes",
    "freeze",
    "openapi_document",
    "safe_filename",
]
