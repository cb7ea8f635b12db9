"""HTTP/2 served over a byte stream: ``connection`` (the reader, the writer, a task per
stream) and ``exchange`` (one stream of it as an ``Exchange``)."""
