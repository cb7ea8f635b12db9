"""The built-in middleware. Each is an ``async (request, next) -> Response`` object to pass to
``Router.middleware``; see ``docs/middleware.md``."""

from .compression import CompressionMiddleware as CompressionMiddleware
from .cors import Cors as Cors
from .cors import CorsMiddleware as CorsMiddleware
from .cross_origin import CrossOriginProtection as CrossOriginProtection
from .logger import LoggerMiddleware as LoggerMiddleware
from .rate_limit import RateLimitMiddleware as RateLimitMiddleware
from .request_id import RequestId as RequestId
from .request_id import RequestIdMiddleware as RequestIdMiddleware
from .security import SecurityHeadersMiddleware as SecurityHeadersMiddleware
from .sessions import SessionMiddleware as SessionMiddleware
from .telemetry import Telemetry as Telemetry
from .telemetry import linked_task as linked_task
from .timeout import TimeoutMiddleware as TimeoutMiddleware

__all__ = [
    "CompressionMiddleware",
    "Cors",
    "CorsMiddleware",
    "CrossOriginProtection",
    "LoggerMiddleware",
    "RateLimitMiddleware",
    "RequestId",
    "RequestIdMiddleware",
    "SecurityHeadersMiddleware",
    "SessionMiddleware",
    "Telemetry",
    "TimeoutMiddleware",
    "linked_task",
]
