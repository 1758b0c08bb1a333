"""MCP over streamable HTTP at ``/mcp``: the memory tools for the agent's model."""
