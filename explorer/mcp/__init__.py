"""The Model Context Protocol front end: ``explorer mcp`` serves the index to agents."""
