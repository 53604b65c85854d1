"""The official MCP Python SDK (PyPI mcp==2.3.0, .tools/venv-mcp) as an OAuth
client of the hub's MCP front: nothing but the server URL and the member's
client credentials at its own identity provider.

The SDK's OAuth provider for the client-credentials grant,
`ClientCredentialsOAuthProvider`, is the `auth` of the httpx2 client handed to
the Streamable HTTP transport (the SDK's documented way to authenticate):

  1. the first request has no token: the hub answers 401 with
     `WWW-Authenticate: Bearer resource_metadata="..."`;
  2. the SDK reads that RFC 9728 document, finds the resource and the
     authorization server, reads the issuer's metadata, and asks its token
     endpoint for a token for that resource (RFC 8707 `resource`);
  3. it retries with the token.

usage: python mcp_oauth_client.py URL CLIENT_ID CLIENT_SECRET ISSUER call TOOL JSON
output (one JSON object): {"result": {"is_error", "structured", "text"},
  "protocol_version", "token_requests": n} or {"error": {"message", "type"}}
exit: 0 any answer, 3 no answer, 2 usage.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class MemoryStorage:
    """The SDK's TokenStorage protocol, in memory (one run, one token)."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def run(url, client_id, client_secret, issuer, tool, arguments):
    token_requests = []

    async def count_token_requests(request):
        if request.url.path.endswith("/token"):
            token_requests.append(str(request.url))

    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=client_id,
        client_secret=client_secret,
        issuer=issuer,
    )
    http = httpx2.AsyncClient(auth=auth, event_hooks={"request": [count_token_requests]})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport) as client:
            r = await client.call_tool(tool, arguments)
            texts = [c.text for c in r.content or [] if getattr(c, "text", None)]
            return {
                "result": {
                    "is_error": bool(r.is_error),
                    "structured": r.structured_content,
                    "text": " ".join(texts) if texts else None,
                },
                "protocol_version": client.protocol_version,
                "token_requests": len(token_requests),
            }


def main(argv):
    if len(argv) != 7 or argv[4] != "call":
        print(__doc__, file=sys.stderr)
        return 2
    url, client_id, client_secret, issuer, _, tool, raw = argv
    try:
        out = asyncio.run(run(url, client_id, client_secret, issuer, tool, json.loads(raw)))
    except Exception as e:  # the SDK's own error, reported as data
        print(json.dumps({"error": {"message": str(e), "type": type(e).__name__}}))
        return 3
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
