"""HTTP/1.1 served over a byte stream: ``connection`` (the request loop and the connection's
deadlines), ``exchange`` (one request of it as an ``Exchange``) and ``reader`` (the one reader
of the stream)."""
