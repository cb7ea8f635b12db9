"""Streaming ``multipart/form-data``: a sans-I/O decoder over python-multipart with the limits
of ``MultipartConfig`` (``decoder``, ``charsets``), the async ``Multipart``/``Field`` API
handlers use (``form``), and safe file handling (``files``, which does file I/O through trio).

Nothing is imported here: the sans-I/O parts (the extractor planner uses ``decoder``) must be
importable without the I/O parts.
"""
