"""Cookie sessions: ``Session`` (the extractor) and the sealing behind ``SessionMiddleware``."""
