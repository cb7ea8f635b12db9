"""Files: ``Response.file`` (conditional requests, ranges, ``Content-Disposition``) and the
body that sends a file in chunks or with ``os.sendfile``."""
