"""Shared fixtures. pytest-trio runs every ``async def`` test in its own trio run
(``trio_mode = true`` in pyproject.toml)."""
