"""An OAuth-protected MCP server built with the official Python SDK's auth support (mcp 2.x
`mcp.server.auth`): it serves its protected-resource metadata (RFC 9728), answers 401 with a
`WWW-Authenticate` challenge, and verifies JWT access tokens from ISSUER against its JWKS
(signature, issuer, audience = this server's URL, expiry, the `mcp:tools` scope).

Usage: python oauth_server.py PORT ISSUER   (serves http://127.0.0.1:PORT/mcp; prints "listening")
With OAUTH_SERVER_HITS set, appends one line per request to that file (tests count how often a
client that is not signed in comes back).
"""

import os
import sys

import jwt
import uvicorn
from starlette.middleware.base import BaseHTTPMiddleware

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

port, issuer = int(sys.argv[1]), sys.argv[2]
resource = f"http://127.0.0.1:{port}/mcp"


class JwtVerifier:
    def __init__(self):
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks")

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = self.keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(token, key, algorithms=["RS256", "PS256", "ES256"], audience=resource, issuer=issuer)
        except jwt.PyJWTError:
            return None
        return AccessToken(
            token=token,
            client_id=claims.get("client_id", ""),
            scopes=claims.get("scope", "").split(),
            expires_at=claims.get("exp"),
            resource=resource,
            subject=claims.get("sub"),
        )


app = MCPServer(
    "protected",
    token_verifier=JwtVerifier(),
    auth=AuthSettings(
        issuer_url=issuer,
        resource_server_url=resource,
        required_scopes=["mcp:tools"],
        validate_token_resource=True,
    ),
)


@app.tool()
def whoami() -> str:
    """Say who signed in."""
    return "signed in"


web = app.streamable_http_app()
hits = os.environ.get("OAUTH_SERVER_HITS")
if hits:
    class Count(BaseHTTPMiddleware):
        async def dispatch(self, request, call_next):
            with open(hits, "a") as f:
                f.write(f"{request.method} {request.url.path} {'token' if request.headers.get('authorization') else 'none'}\n")
            return await call_next(request)

    web.add_middleware(Count)
print("listening", flush=True)
uvicorn.run(web, host="127.0.0.1", port=port, log_level="warning")
