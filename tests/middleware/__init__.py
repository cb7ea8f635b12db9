"""Tests of the built-in middleware (``trioframe.middleware``)."""
