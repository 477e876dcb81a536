"""Machine-readable views of the model: ``bl describe`` (``describe``) and the OpenAPI
export (``openapi``).  They read the model only; the CLI and the MCP server serve them.
"""
