"""The converters: how text and JSON become typed values and back (cattrs converters built
per type, the value types they know, the startup check that a type can be converted, and the
JSON encoder responses use). Ground floor: imports nothing of trioframe but ``_errors`` and
``_http``."""
