"""trio I/O: the only package that touches listeners, streams, TLS and processes."""
