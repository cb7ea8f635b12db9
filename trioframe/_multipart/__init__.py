"""Streaming ``multipart/form-data``: a sans-I/O decoder over python-multipart with the limits
of ``MultipartConfig`` (``decoder``), the async ``Multipart``/``Field`` API handlers use
(``form``), and safe file handling (``files``)."""

from .decoder import MultipartConfig
from .files import FileField, safe_filename
from .form import Field, Multipart

__all__ = ["Field", "FileField", "Multipart", "MultipartConfig", "safe_filename"]
