"""The package's version (``trioframe.__version__``), kept apart so that any module can read
it without importing the public namespace."""

__version__ = "0.2.4"
"""The version of this trioframe, a PEP 440 string."""
