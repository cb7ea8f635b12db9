"""Application-level tests: routing, handlers, requests, responses and errors, driven through
the in-memory ``TestClient`` (plus plain unit tests of the sans-I/O HTTP values)."""
