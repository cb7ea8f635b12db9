"""Sans-I/O HTTP values: methods, headers, URIs, query strings, cookies, the field grammar
and media types. Never imports trio."""
