"""Sans-I/O protocol adapters (h11 now; h2 and wsproto plug in beside it) and the
negotiation step that picks one. Nothing here imports trio: bytes in, events out."""
