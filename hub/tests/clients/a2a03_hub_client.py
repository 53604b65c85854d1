"""A2A v0.3 test client for the hub's v0.3 bridge, on the official Python
a2a-sdk 0.3 line (run it with .tools/venv03/bin/python; scripts/setup test
installs that venv from scripts/requirements-a2a03.txt).

The v0.3 twin of a2a_hub_client.py: same command line (less --transport and
the task commands) and same JSON output, so a test can run one scenario
through both and compare. URL is the agent's base URL (the hub's
`{hub}/a2a/{provider}`, or a v0.3 agent such as tests/agents/v03_provider.py);
the SDK resolves the card from `URL/.well-known/agent-card.json` and then
POSTs JSON-RPC (v0.3 method names: message/send) to the card's top-level
`url` with the card's `preferredTransport` (JSONRPC here).

Headers: this client adds only `Authorization: Bearer TOKEN`, to the card
fetch and to every call (none when TOKEN is "", to test a refusal). It sends NO A2A-Version header, because the 0.3 SDK
never sends one: a2a-sdk 0.3.26 has no notion of it (no A2A-Version anywhere
in its source). Seen on the wire (a logging HTTP server), card fetch and
message/send alike carry only httpx's defaults (Host, Accept: */*,
Accept-Encoding, Connection, User-Agent: python-httpx/0.28.1), plus
Content-Type/Content-Length on the POST, plus our Authorization. The SDK
would add `X-A2A-Extensions` only if extensions were asked for (they are
not). That is what a hub sees from a real v0.3 client: no A2A-Version header,
so per the A2A spec, version 0.3.

What the 0.3 SDK needs in a card (pydantic model a2a.types.AgentCard,
validated by A2ACardResolver; unknown fields are ignored): required `name`,
`description`, `url`, `version`, `capabilities`, `defaultInputModes`,
`defaultOutputModes`, `skills` (each with `id`, `name`, `description`,
`tags`); `protocolVersion` defaults to "0.3.0" and `preferredTransport` to
"JSONRPC" when absent, and `supportedInterfaces` is ignored. So a v1.0-only
card (no `url`) fails validation ("url: Field required"). Each
`securitySchemes` entry must have the v0.3 (OpenAPI) shape
`{"type": "http", "scheme": "bearer"}`: the v1.0 shape
`{"httpAuthSecurityScheme": {...}}` is NOT rejected but silently misread as
a MutualTLS scheme (the only union member without a required field), and
v1.0 `securityRequirements` is ignored (v0.3 reads `security`).
The 1.3 SDK tolerates all the v0.3 fields in a v1.0 card (tested): with
`supportedInterfaces` present it drops `url`, `protocolVersion`,
`preferredTransport`, `additionalInterfaces` and `security` unread, and an
entry `{"type": "http", "scheme": "bearer", "httpAuthSecurityScheme": {...}}`
parses in both SDKs (the 1.3 SDK, seeing `type`, converts the v0.3 half and
ignores the nested v1.0 object; the 0.3 SDK ignores the nested object). So
one card can serve both: the v1.0 fields, plus `url` (the JSON-RPC endpoint
the v0.3 client POSTs to, without A2A-Version), `protocolVersion: "0.3.0"`,
`preferredTransport: "JSONRPC"`, `security`, and both scheme shapes per
entry.

usage:
  python a2a03_hub_client.py URL TOKEN card
  python a2a03_hub_client.py URL TOKEN send (--data JSON | --text TEXT)
        [--skill ID] [--capability ID] [--message-id ID] [--timeout S]

Output (exactly one JSON object on stdout):
  card  {"name", "skills": [ids], "interfaces": [{"url", "protocolBinding",
         "protocolVersion"}], "security_schemes": [names]}; interfaces are
         the top-level url/preferredTransport, then additionalInterfaces
         (without a repeat of the first), all with the card's protocolVersion
  send  {"kind": "message"|"task", "data", "text", "task_id", "context_id",
         "state"}: the first data part and the first text part of the answer
         (for a task: of its artifacts, else of status.message); task fields
         null for a message; state as v0.3 spells it (completed, ...).
  `--capability ID` wraps --data as {"capability": ID, "input": DATA}
  (without it --data must be a JSON object: a v0.3 DataPart's data is one);
  `--skill ID` sets message metadata {"skill": ID}.

Errors: as in a2a_hub_client.py, an error answer prints
  {"error": {"code", "message", "reason", "domain", "trace_id",
             "http_status", "sdk_error"}}
and exits 0. How a2a-sdk 0.3 surfaces error `data`: a JSON-RPC error in a 2xx
answer raises A2AClientJSONRPCError whose `.error` is the pydantic
JSONRPCError (or a code-specific subclass) with `code`, `message` and `data`
kept as sent (`data: Any`), so reason/domain/traceId are read from the SDK's
`.error.data` (the first google.rpc.ErrorInfo in the list). A non-2xx answer
raises A2AClientHTTPError(status_code, text) and the body is dropped; only
then are the details read from the raw body of that same response, kept by
an httpx response hook (no second request is made). A failed card fetch is
A2AClientHTTPError too (status kept, body dropped), same fallback.
Exit codes: 0 for any answer from the agent; 2 for usage; 3 when there was no
A2A answer at all (refused, client-side timeout, a card the SDK cannot
validate, a body that is not JSON-RPC): a JSON error object with
"code": null is printed then too, the cause on stderr.
"""

import argparse
import asyncio
import json
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import (
    A2AClientError,
    A2AClientHTTPError,
    A2AClientJSONRPCError,
    A2AClientTimeoutError,
)
from a2a.types import DataPart, Message, Part, Role, Task, TextPart


from hub_answer import Capture, NoAnswer, error_info  # this directory
from sdk03 import first_parts  # this directory

def error_object(code, message, data, status, sdk_error):
    info = error_info(data)
    return {
        "error": {
            "code": code,
            "message": message,
            "reason": info.get("reason"),
            "domain": info.get("domain"),
            "trace_id": (info.get("metadata") or {}).get("traceId"),
            "http_status": status,
            "sdk_error": sdk_error,
        }
    }


def no_answer(message, sdk_error):
    return error_object(None, message, None, None, sdk_error)


def http_error_object(exc, capture):
    """A non-2xx answer: the SDK kept only the status; details from the raw body."""
    body = capture.body if isinstance(capture.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else {}
    code = err.get("code") if isinstance(err.get("code"), int) else exc.status_code
    return error_object(
        code,
        err.get("message") or exc.message,
        err.get("data", err.get("details")),
        capture.status,
        type(exc).__name__,
    )


def build_message(args):
    if args.text is not None:
        part = Part(root=TextPart(text=args.text))
    else:
        value = json.loads(args.data)
        if args.capability:
            value = {"capability": args.capability, "input": value}
        part = Part(root=DataPart(data=value))
    return Message(
        role=Role.user,
        message_id=args.message_id or str(uuid.uuid4()),
        parts=[part],
        metadata={"skill": args.skill} if args.skill else None,
    )


def card_summary(card):
    version = card.protocol_version
    interfaces = [{"url": card.url, "protocolBinding": card.preferred_transport or "JSONRPC", "protocolVersion": version}]
    for extra in card.additional_interfaces or []:
        entry = {"url": extra.url, "protocolBinding": extra.transport, "protocolVersion": version}
        if entry not in interfaces:
            interfaces.append(entry)
    return {
        "name": card.name,
        "skills": [s.id for s in card.skills],
        "interfaces": interfaces,
        "security_schemes": list((card.security_schemes or {}).keys()),
    }


async def run(args, http):
    card = await A2ACardResolver(http, args.url).get_agent_card()
    if args.command == "card":
        return card_summary(card)
    client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    try:
        events = [e async for e in client.send_message(build_message(args))]
    finally:
        await client.close()
    if not events:
        raise NoAnswer("the agent answered nothing")
    last = events[-1]
    if isinstance(last, Message):
        data, text = first_parts([last.parts])
        return {"kind": "message", "data": data, "text": text, "task_id": None, "context_id": None, "state": None}
    task = last[0] if isinstance(last, tuple) else last
    if not isinstance(task, Task):
        raise NoAnswer(f"unexpected answer: {last!r}")
    data, text = first_parts([a.parts for a in task.artifacts or []])
    status_parts = [task.status.message.parts] if task.status.message else []
    sdata, stext = first_parts(status_parts)
    return {
        "kind": "task",
        "data": data if data is not None else sdata,
        "text": text if text is not None else stext,
        "task_id": task.id,
        "context_id": task.context_id or None,
        "state": task.status.state.value,
    }


def parse_args(argv):
    p = argparse.ArgumentParser(description="A2A v0.3 test client (a2a-sdk 0.3).")
    p.add_argument("url", help="agent base URL: {hub}/a2a/{provider} or a v0.3 agent's")
    p.add_argument("token", help='bearer token; "" sends no Authorization header')
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--timeout", type=float, default=60.0, help="client-side timeout, seconds")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("card", parents=[common])
    send = sub.add_parser("send", parents=[common])
    what = send.add_mutually_exclusive_group(required=True)
    what.add_argument("--data", help="JSON value for a data part")
    what.add_argument("--text", help="text for a text part")
    send.add_argument("--skill", help='puts {"skill": ID} in the message metadata')
    send.add_argument("--capability", help='wraps --data as {"capability": ID, "input": DATA}')
    send.add_argument("--message-id")
    args = p.parse_args(argv)
    if args.command == "send":
        if args.capability and args.data is None:
            p.error("--capability wraps --data; it cannot go with --text")
        if args.data is not None:
            try:
                value = json.loads(args.data)
            except ValueError as e:
                p.error(f"--data is not JSON: {e}")
            if not args.capability and not isinstance(value, dict):
                p.error("--data must be a JSON object (a v0.3 DataPart's data), or use --capability")
    return args


async def main(argv):
    args = parse_args(argv)
    capture = Capture()
    http = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {args.token}"} if args.token else {},
        timeout=args.timeout,
        event_hooks={"request": [capture.reset], "response": [capture]},
    )
    rc = 0
    try:
        out = await run(args, http)
    except NoAnswer as e:
        out, rc = no_answer(str(e), None), 3
    except A2AClientJSONRPCError as e:
        err = e.error
        out = error_object(err.code, err.message, err.data, capture.status, type(e).__name__)
    except A2AClientHTTPError as e:
        if capture.status is None:  # the SDK's 503 for "no HTTP answer at all"
            out, rc = no_answer(str(e), type(e).__name__), 3
        else:
            out = http_error_object(e, capture)
    except (A2AClientTimeoutError, A2AClientError, ValueError) as e:
        # Timeout, a card or body the SDK cannot validate (pydantic's
        # ValidationError is a ValueError), no compatible transport.
        out, rc = no_answer(f"{type(e).__name__}: {e}", type(e).__name__), 3
    finally:
        await http.aclose()
    print(json.dumps(out))
    if rc:
        print(f"a2a03_hub_client: {out['error']['message']}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
