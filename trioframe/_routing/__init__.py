"""Routing: pattern parsing, the trie matcher and the ``Router`` builder. Sans-I/O: no trio.

``Router`` collects routes; ``Router.freeze(prepare)`` builds a ``RouteTable`` once, and
``RouteTable.match(method, raw_path)`` answers each request with one of the result classes
re-exported here. The modules: ``pattern`` (syntax), ``router`` (builder), ``register`` (its
registration calls), ``meta`` (their keywords: name, status, tags, ...), ``table`` (freeze
and match), ``trie`` (the segment trie and percent-decoding), ``results`` (the values handed to
the dispatch layer), ``paths`` (route names and the paths they build).
"""

from .pattern import Pattern as Pattern
from .pattern import parse_pattern as parse_pattern
from .results import AutoOptions as AutoOptions
from .results import BadPath as BadPath
from .results import Endpoint as Endpoint
from .results import Found as Found
from .results import MatchResult as MatchResult
from .results import NoRoute as NoRoute
from .results import Owner as Owner
from .results import Redirect as Redirect
from .results import WrongMethod as WrongMethod
from .router import Router as Router
from .table import RouteTable as RouteTable

__all__ = [
    "AutoOptions",
    "BadPath",
    "Endpoint",
    "Found",
    "MatchResult",
    "NoRoute",
    "Owner",
    "Pattern",
    "RouteTable",
    "Router",
    "WrongMethod",
    "parse_pattern",
]
