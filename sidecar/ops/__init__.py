"""The operations the sidecar offers, independent of the way a request comes in (HTTP, MCP, the
crew listener, the CLI): the registry of operations and the rules every one of them obeys."""
