"""A streamable-HTTP MCP server (official Python SDK, mcp 2.x) behind a static bearer token.

Usage: python bearer_server.py PORT TOKEN   (serves http://127.0.0.1:PORT/mcp; prints "listening")
Requests without `Authorization: Bearer TOKEN` get 401 with a WWW-Authenticate header, as
servers behind an API gateway do. Offload's interop tests use it for the auth_required code.
"""

import sys

import uvicorn
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from mcp.server.mcpserver import MCPServer

port, token = int(sys.argv[1]), sys.argv[2]
app = MCPServer("bearer")


@app.tool()
def whoami() -> str:
    """Say that the caller got in."""
    return "authorized"


class Bearer(BaseHTTPMiddleware):
    async def dispatch(self, request, call_next):
        if request.headers.get("authorization") != f"Bearer {token}":
            return JSONResponse(
                {"error": "invalid_token"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return await call_next(request)


web = app.streamable_http_app()
web.add_middleware(Bearer)
print("listening", flush=True)
uvicorn.run(web, host="127.0.0.1", port=port, log_level="warning")
