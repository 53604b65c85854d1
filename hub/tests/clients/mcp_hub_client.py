"""An MCP client this project did not write — the official Python SDK
(`mcp` 2.x, from PyPI) — talking to the hub's MCP front,
`/mcp/{provider}`, as a member system (its own bearer token).

Usage: mcp_hub_client.py HUB_MCP_URL TOKEN ARGS_JSON [ARGS_JSON ...]

Lists the tools, then calls `query_records` once per ARGS_JSON, and prints
one JSON object: the tools (name, input schema keys), the server's name,
and per call either the tool result (`is_error`, its text, its structured
content) or the MCP error the SDK raised (code, message, data). The test
(hub/tests/mcp.rs) asserts on it.
"""

import asyncio
import json
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def main(url: str, token: str, calls: list) -> dict:
    headers = {"Authorization": f"Bearer {token}"}
    out: dict = {"calls": []}
    async with httpx2.AsyncClient(headers=headers, timeout=10.0) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.server_info.name
                tools = await session.list_tools()
                out["tools"] = [
                    {
                        "name": t.name,
                        "input_keys": sorted((t.input_schema or {}).get("properties", {}).keys()),
                    }
                    for t in tools.tools
                ]
                for args in calls:
                    try:
                        r = await session.call_tool("query_records", args)
                        out["calls"].append(
                            {
                                "is_error": bool(r.is_error),
                                "text": " ".join(c.text for c in r.content if getattr(c, "text", None)),
                                "structured": r.structured_content,
                            }
                        )
                    except MCPError as e:
                        out["calls"].append(
                            {"mcp_error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}}
                        )
    return out


if __name__ == "__main__":
    hub_url, token = sys.argv[1], sys.argv[2]
    arguments = [json.loads(a) for a in sys.argv[3:]]
    print(json.dumps(asyncio.run(main(hub_url, token, arguments))))
