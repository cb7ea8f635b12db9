"""Sans-I/O protocol adapters (HTTP/1.1 over h11 or llhttp, HTTP/2 over h2), the WebSocket
opening handshake, and the negotiation step that picks a protocol. Nothing here imports trio:
bytes in, events out."""
