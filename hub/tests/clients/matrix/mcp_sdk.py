"""Outside-client matrix: the official MCP Python SDK (PyPI mcp==2.3.0,
.tools/venv-mcp, scripts/requirements-mcp.txt), through its high-level
`mcp.Client` (the README's "A client in 10 lines"), with the caller's bearer
token on an httpx2 client handed to the SDK's Streamable HTTP transport (the
SDK's documented way to set headers: `streamable_http_client(url,
http_client=...)`):

    transport = streamable_http_client(URL, http_client=httpx2.AsyncClient(headers=...))
    async with Client(transport, mode=MODE) as client:
        await client.list_tools(); await client.call_tool(name, arguments)

--protocol picks the revision with the SDK's public `mode=` option:
  2025-11-25 (the default here)  mode="legacy": the `initialize` handshake,
                 offering the SDK's newest handshake revision, 2025-11-25
                 (mcp_types.version.LATEST_HANDSHAKE_VERSION), then
                 Mcp-Session-Id-bound calls. The same wire as
                 ../mcp_hub_client.py, which drives ClientSession.initialize()
                 directly.
  default        mode="auto", the SDK's default: `server/discover` at
                 2026-07-28 (stateless, no initialize), falling back to
                 initialize only for a legacy server.
(mcp 2.3 reaches 2026-07-28 only through discover/adopt, and handshake
revisions only through initialize: mode="2025-11-25" is refused by the SDK.)

The httpx2 client also has a response hook keeping the last response's
status and JSON body (hub_answer.py's Capture), read only when the SDK
synthesized an error from a bare HTTP status and so dropped the body.

usage: python mcp_sdk.py URL TOKEN tools [--protocol 2025-11-25|default]
       python mcp_sdk.py URL TOKEN call TOOL JSON [--protocol ...]
output, exit codes: as fastmcp_client.py.
"""

import asyncio
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from matrix_common import leaf, Capture, emit, error_info, mcp_error, mcp_parser, no_answer_mcp, parse, transport_failure

PROG = "mcp_sdk"
MODES = {"2025-11-25": "legacy", "default": "auto"}


def reason_of(data, capture):
    if isinstance(data, dict) and data.get("reason"):
        return data["reason"]
    if isinstance(data, list):
        return error_info(data).get("reason")
    body = capture.body if isinstance(capture.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else {}
    raw = err.get("data", err.get("details"))
    if isinstance(raw, dict):
        return raw.get("reason")
    return error_info(raw).get("reason")


def text_of(content):
    texts = [c.text for c in content or [] if getattr(c, "text", None)]
    return " ".join(texts) if texts else None


async def run(args, http, capture):
    transport = streamable_http_client(args.url, http_client=http)
    async with Client(transport, mode=MODES[args.protocol], read_timeout_seconds=args.timeout) as client:
        version = client.protocol_version
        if args.op == "tools":
            tools = await client.list_tools()
            return {"tools": [t.name for t in tools.tools], "protocol_version": version}
        try:
            r = await client.call_tool(args.tool, args.value)
        except MCPError as e:
            return {**mcp_error(e.error.code, e.error.message, reason_of(e.error.data, capture)), "protocol_version": version}
        return {
            "result": {"is_error": bool(r.is_error), "structured": r.structured_content, "text": text_of(r.content)},
            "protocol_version": version,
        }


async def main(argv):
    args = parse(mcp_parser("Outside-client matrix: official mcp 2.3 SDK.", protocols=list(MODES)), argv)
    capture = Capture()
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {args.token}"} if args.token else {},
        timeout=httpx2.Timeout(args.timeout, read=max(args.timeout, 300.0)),
        event_hooks={"request": [capture.reset], "response": [capture]},
    )
    rc = 0
    try:
        try:
            out = await run(args, http, capture)
        except BaseExceptionGroup as group:
            raise leaf(group) from group
    except MCPError as e:  # during the handshake or tools/list
        if transport_failure(e, (httpx2.TransportError,)):
            out, rc = no_answer_mcp(f"{type(e).__name__}: {e}"), 3
        else:
            out = {**mcp_error(e.error.code, e.error.message, reason_of(e.error.data, capture)), "protocol_version": None}
    except Exception as e:  # refused, timed out, an answer that is not MCP
        out, rc = no_answer_mcp(f"{type(e).__name__}: {e}"), 3
    finally:
        await http.aclose()
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
