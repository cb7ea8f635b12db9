"""What the OpenTelemetry HTTP semantic conventions fix for server metrics, shared by
``Telemetry`` and ``Router.metrics``: the duration histogram's buckets and the method label."""

from __future__ import annotations

from .method import KNOWN_METHODS

__all__ = ["DURATION_BUCKETS", "OTHER_METHOD", "method_label"]

#: The bucket boundaries the conventions advise for ``http.server.request.duration`` (s).
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
#: The label of a method the conventions do not list.
OTHER_METHOD = "_OTHER"
_LABELS = {name: str(method) for name, method in KNOWN_METHODS.items()}


def method_label(method: bytes | str) -> str:
    """The method as a label: one of the nine standard methods (``GET`` ... ``TRACE``), else
    ``_OTHER``: a client may send any token as a method, and each would be a new series."""
    return _LABELS.get(method, OTHER_METHOD)
