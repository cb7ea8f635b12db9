"""Sans-I/O HTTP values: methods, headers, URIs, query strings, cookies and the field
grammar. Never imports trio."""
