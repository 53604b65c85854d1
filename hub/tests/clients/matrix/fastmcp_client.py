"""Outside-client matrix: FastMCP 4's client (PyPI fastmcp==4.2.3 on the
official mcp 2.3 SDK; .tools/venv-mcp, scripts/requirements-fastmcp.txt),
with its DEFAULT settings, the way FastMCP's docs show a client with a bearer
token:

    async with fastmcp.Client(URL, auth=TOKEN) as client:   # auth=str -> BearerAuth
        await client.list_tools()
        await client.call_tool(name, arguments)

Defaults mean: `mode="auto"`, so the client probes `server/discover` at the
newest modern revision (2026-07-28, stateless: no `initialize`, no session)
and falls back to the `initialize` handshake (2025-11-25) only if the server
shows it is a legacy one; output-schema validation of tool results on; the
response cache on. The one non-default argument is `raise_on_error=False` on
call_tool, so a tool error comes back as the result (is_error, its text, its
structured content) instead of a ToolError that keeps only the text.

usage: python fastmcp_client.py URL TOKEN tools
       python fastmcp_client.py URL TOKEN call TOOL JSON
output (one JSON object):
  tools  {"tools": [names], "protocol_version": the negotiated revision}
  call   {"result": {"is_error", "structured", "text"}, "protocol_version"}
  error  {"error": {"code", "message", "reason"}, "protocol_version"} (exit 0):
         an MCP (JSON-RPC) error; reason is error.data.reason (or the
         ErrorInfo reason if data is a google.rpc details list), else null
exit: 0 any answer, 3 no answer (code null, cause on stderr), 2 usage.
"""

import asyncio
import sys

import httpx2
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from matrix_common import leaf, emit, error_info, mcp_error, mcp_parser, no_answer_mcp, parse, transport_failure

PROG = "fastmcp_client"


def reason_of(data):
    if isinstance(data, dict):
        return data.get("reason")
    return error_info(data).get("reason")


def text_of(content):
    texts = [c.text for c in content or [] if getattr(c, "text", None)]
    return " ".join(texts) if texts else None


async def run(args, client):
    async with client:
        version = client.protocol_version
        if args.op == "tools":
            tools = await client.list_tools()
            return {"tools": [t.name for t in tools], "protocol_version": version}
        try:
            r = await client.call_tool(args.tool, args.value, raise_on_error=False)
        except MCPError as e:
            return {**mcp_error(e.error.code, e.error.message, reason_of(e.error.data)), "protocol_version": version}
        return {
            "result": {"is_error": bool(r.is_error), "structured": r.structured_content, "text": text_of(r.content)},
            "protocol_version": version,
        }


async def main(argv):
    args = parse(mcp_parser("Outside-client matrix: fastmcp 4 client, default settings."), argv)
    client = Client(args.url, auth=args.token or None, timeout=args.timeout)
    rc = 0
    try:
        try:
            out = await run(args, client)
        except BaseExceptionGroup as group:
            raise leaf(group) from group
    except MCPError as e:  # during connect (server/discover, initialize) or tools/list
        if transport_failure(e, (httpx2.TransportError,)):
            out, rc = no_answer_mcp(f"{type(e).__name__}: {e}"), 3
        else:
            out = {**mcp_error(e.error.code, e.error.message, reason_of(e.error.data)), "protocol_version": None}
    except Exception as e:  # refused, timed out, an answer that is not MCP
        out, rc = no_answer_mcp(f"{type(e).__name__}: {e}"), 3
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
