"""MCP servers as toolsets: the servers a loop is given (stdio, streamable HTTP), the
connection to one (the official SDK, imported only when a server is used), its tools, and where
a stdio server's log lines go. Its front is `reactloop._tools`."""
