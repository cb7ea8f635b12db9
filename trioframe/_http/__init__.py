"""Sans-I/O HTTP values: methods, headers, URIs and query strings. Never imports trio."""
