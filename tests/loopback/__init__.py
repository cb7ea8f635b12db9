"""Loopback-socket tests: a real trioframe server on 127.0.0.1 driven by raw sockets,
httpx and curl."""
