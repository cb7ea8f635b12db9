"""Prometheus metrics for an application (``Router.metrics``).

``observer.Observer`` is what the server reports to (requests, connections, TLS, HTTP/2,
WebSocket, shutdown); ``route.MetricsRoute`` is what ``Router.metrics`` registers; the
implementation over prometheus_client (``prometheus.PrometheusObserver``) is imported only when
an application that asked for metrics is frozen. This package itself imports neither trio nor
prometheus_client, so the router (a sans-I/O layer) may name it.
"""
