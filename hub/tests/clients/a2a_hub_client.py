"""A2A v1.0 test client for the hub's per-provider A2A surface, on the official
Python a2a-sdk 1.3 (run it with .tools/venv/bin/python).

Tests drive it as a process and assert on the one JSON object it prints. It
talks to whatever agent URL it is given: the hub's `{hub}/a2a/{provider}`, or
a reference peer's base URL (`http://127.0.0.1:PORT`). The card is resolved
by the SDK from `URL/.well-known/agent-card.json`, and every request (the card
fetch included) carries `Authorization: Bearer TOKEN` (none when TOKEN is
"", to test a refusal) and `A2A-Version: 1.0`.
(The SDK itself sends A2A-Version: 1.0 on the card fetch and every call,
even without this client's header: its factory `setdefault`s it on the httpx
client. If the card's chosen interface declares protocolVersion 0.3, e.g. a
v0.3-only card, whose url/preferredTransport the SDK turns into such an
interface, it uses its v0.3 compat transport: v0.3 method names
(message/send) and `a2a-version: 0.3` on each call instead of 1.0.)

usage:
  python a2a_hub_client.py URL TOKEN card
  python a2a_hub_client.py URL TOKEN send (--data JSON | --text TEXT)
        [--skill ID] [--capability ID] [--message-id ID]
        [--transport jsonrpc|http+json] [--timeout S]
  python a2a_hub_client.py URL TOKEN get-task ID    [--transport ...]
  python a2a_hub_client.py URL TOKEN cancel-task ID [--transport ...]
  python a2a_hub_client.py URL TOKEN list-tasks     [--transport ...]

Output (exactly one JSON object on stdout):
  card        {"name", "skills": [ids], "interfaces": [{"url",
               "protocolBinding", "protocolVersion", "tenant"}], "security_schemes":
               [names]}  (interfaces as the SDK parsed them: a v0.3-only card
               gets one synthesized from its url/preferredTransport)
  send        {"kind": "message"|"task", "data", "text", "task_id",
               "context_id", "state"}: data/text are the first data part and
               the first text part of the answer (null when absent); for a
               task they come from its artifacts, else from status.message;
               task fields are null for a message
  get-task,   {"task_id", "context_id", "state"}
  cancel-task
  list-tasks  {"tasks": [{"task_id", "context_id", "state"}, ...]}
  `state` is spelled as in v0.3 (submitted, working, input-required,
  completed, canceled, failed, rejected, auth-required, unknown), so a test
  can compare the output of this client and of a2a03_hub_client.py.
  `--capability ID` wraps --data as {"capability": ID, "input": DATA};
  `--skill ID` sets message metadata {"skill": ID}; --text sends a text part.

An error answer from the agent (a JSON-RPC error, an HTTP+JSON error status,
or an HTTP error on the card fetch) prints
  {"error": {"code", "message", "reason", "domain", "trace_id",
             "http_status", "sdk_error"}}
and exits 0, so a test can assert on it. code is the error's code on the wire
(the JSON-RPC error.code; for HTTP+JSON the google.rpc.Status code, which is
the HTTP status; for a card fetch refused without a JSON error body, the HTTP
status). reason/domain/trace_id come from the first
`type.googleapis.com/google.rpc.ErrorInfo` in the JSON-RPC error's `data`
list (for HTTP+JSON, in `error.details`): its reason, domain and
metadata.traceId; null when absent. sdk_error names the exception class the
SDK raised.

How a2a-sdk 1.3 surfaces error `data` (read in a2a/client/transports/):
  * JSON-RPC (jsonrpc.py, `_create_jsonrpc_error`): when error.code is one the
    SDK knows (-32700, -32600..-32603, -32001..-32009) it raises the mapped
    A2AError subclass (e.g. InvalidParamsError for -32602) with `.message` =
    error.message and `.data` = the `metadata` dict of the first ErrorInfo in
    `data` (so traceId survives), and drops the ErrorInfo's `reason` and
    `domain`, and any other entries of `data`. For any other code (e.g.
    -32000, which the peers use for 401) it raises a bare A2AClientError whose
    text is "JSON-RPC Error {code}: {message}": data dropped entirely.
  * A non-2xx HTTP answer on JSON-RPC is A2AClientError("HTTP Error N: ...")
    and its body is not read at all.
  * HTTP+JSON (rest.py, `_parse_rest_error`): only when the ErrorInfo reason is
    one of the SDK's own (TASK_NOT_FOUND, INVALID_PARAMS, ...) does it raise the
    mapped class, with `.data` = ErrorInfo.metadata; for any other reason
    (the hub's AUTH_REJECTED, NOT_PERMITTED, ...) it raises A2AClientError("HTTP
    Error N: ...") and keeps nothing of the body (a 404 without a known reason
    becomes MethodNotFoundError).
  * Card fetch (card_resolver.py): AgentCardResolutionError with
    `.status_code`; body not kept.
Because the SDK always drops reason and domain, and everything for codes and
reasons it does not know, this client reads the error details from the raw
response body of the same exchange: an httpx `response` event hook on the
httpx client the SDK uses keeps the last response's status and body. This is
the fallback for error details ONLY; it never makes a second request (a
replayed send would be a second call to the hub: another trace id, another
audit entry, another wait for a TIMEOUT). Where the SDK did keep something
(the mapped class's message and ErrorInfo.metadata), the raw body holds the
same values.

Numbers in --data travel as protobuf Value doubles in this SDK: an input
{"limit": 10} is sent as {"limit": 10.0}, and answers print as floats too.

Exit codes: 0 for any answer from the agent, success or error; 2 for a usage
error (argparse); 3 when no A2A answer could be had at all: the card has no
interface for the asked transport, connection refused, client-side timeout,
an answer that is not A2A, or a call the SDK does not make over the card's
protocol version (its v0.3 compat transport has no ListTasks). One JSON
error object with "code": null is printed then too, and the cause on stderr.
Anything else is a bug (a traceback, exit 1).
"""

import argparse
import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

from hub_answer import Capture, NoAnswer, error_info  # this directory
from sdk13 import message_answer, state_name, task_answer  # this directory

BINDINGS = {"jsonrpc": "JSONRPC", "http+json": "HTTP+JSON"}


def task_summary(task):
    return {"task_id": task.id, "context_id": task.context_id or None, "state": state_name(task.status.state)}


def error_object(exc, capture):
    """The error object from the SDK's exception plus the raw body (see doc)."""
    code = message = None
    info = {}
    body = capture.body if isinstance(capture.body, dict) else {}
    err = body.get("error")
    if isinstance(err, dict):  # JSON-RPC error, or google.rpc.Status (HTTP+JSON)
        code = err.get("code") if isinstance(err.get("code"), int) else None
        message = err.get("message")
        info = error_info(err.get("data", err.get("details")))
    sdk_code = JSON_RPC_ERROR_CODE_MAP.get(type(exc))
    if code is None:
        code = sdk_code if sdk_code is not None else capture.status
    if message is None:
        message = getattr(exc, "message", None) or str(exc)
    sdk_meta = getattr(exc, "data", None)
    trace_id = (sdk_meta or {}).get("traceId") if isinstance(sdk_meta, dict) else None
    if trace_id is None:
        trace_id = (info.get("metadata") or {}).get("traceId")
    return {
        "error": {
            "code": code,
            "message": message,
            "reason": info.get("reason"),
            "domain": info.get("domain"),
            "trace_id": trace_id,
            "http_status": capture.status,
            "sdk_error": type(exc).__name__,
        }
    }


def no_answer(message, sdk_error):
    return {"error": {"code": None, "message": message, "reason": None, "domain": None, "trace_id": None, "http_status": None, "sdk_error": sdk_error}}


def transport_failure(exc):
    """True when the SDK's error was caused by no HTTP answer (refused, timed out)."""
    while exc is not None:
        if isinstance(exc, httpx.RequestError):
            return True
        exc = exc.__cause__
    return False


def answered_error(capture):
    """True when the last response was an error answer: an error status or an error body."""
    body = capture.body if isinstance(capture.body, dict) else {}
    return (capture.status or 0) >= 400 or isinstance(body.get("error"), dict)


def build_message(args):
    if args.text is not None:
        parts = [Part(text=args.text)]
    else:
        value = json.loads(args.data)
        if args.capability:
            value = {"capability": args.capability, "input": value}
        v = struct_pb2.Value()
        json_format.ParseDict(value, v)
        parts = [Part(data=v)]
    msg = Message(role=Role.ROLE_USER, message_id=args.message_id or str(uuid.uuid4()), parts=parts)
    if args.skill:
        msg.metadata.update({"skill": args.skill})
    return msg


def make_client(http, card, transport):
    binding = BINDINGS[transport]
    offered = [(i.protocol_binding, i.url) for i in card.supported_interfaces]
    if not any(b == binding for b, _ in offered):
        raise NoAnswer(
            f"the agent card offers no {binding} interface (it offers: "
            + (", ".join(f"{b} at {u}" for b, u in offered) or "none")
            + ")"
        )
    config = ClientConfig(streaming=False, httpx_client=http, supported_protocol_bindings=[binding])
    return ClientFactory(config).create(card)


async def run(args, http):
    card = await A2ACardResolver(http, args.url).get_agent_card()
    if args.command == "card":
        return {
            "name": card.name,
            "skills": [s.id for s in card.skills],
            "interfaces": [
                {"url": i.url, "protocolBinding": i.protocol_binding, "protocolVersion": i.protocol_version,
                 "tenant": i.tenant or None}
                for i in card.supported_interfaces
            ],
            "security_schemes": list(card.security_schemes.keys()),
        }
    client = make_client(http, card, args.transport)
    try:
        if args.command == "send":
            try:
                events = [e async for e in client.send_message(SendMessageRequest(message=build_message(args)))]
            except ValueError as e:  # the SDK's "Response has neither task nor message"
                raise NoAnswer(f"an answer that is not A2A: {e}") from e
            if not events:
                raise NoAnswer("the agent answered nothing")
            last = events[-1]
            if last.HasField("message"):
                return {**message_answer(last.message), "task_id": None, "context_id": None}
            if last.HasField("task"):
                return {**task_answer(last.task), **task_summary(last.task)}
            raise NoAnswer(f"unexpected answer: {json_format.MessageToDict(last)}")
        if args.command == "get-task":
            return task_summary(await client.get_task(GetTaskRequest(id=args.id)))
        if args.command == "cancel-task":
            return task_summary(await client.cancel_task(CancelTaskRequest(id=args.id)))
        if args.command == "list-tasks":
            answer = await client.list_tasks(ListTasksRequest())
            return {"tasks": [task_summary(t) for t in answer.tasks]}
    finally:
        await client.close()
    raise AssertionError(args.command)


def parse_args(argv):
    p = argparse.ArgumentParser(description="A2A v1.0 test client (a2a-sdk 1.3).")
    p.add_argument("url", help="agent base URL: {hub}/a2a/{provider} or a peer's http://127.0.0.1:PORT")
    p.add_argument("token", help='bearer token; "" sends no Authorization header')
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--transport", choices=sorted(BINDINGS), default="jsonrpc")
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
    for name in ("get-task", "cancel-task"):
        sub.add_parser(name, parents=[common]).add_argument("id")
    sub.add_parser("list-tasks", parents=[common])
    args = p.parse_args(argv)
    if args.command == "send" and args.capability and args.data is None:
        p.error("--capability wraps --data; it cannot go with --text")
    if args.command == "send" and args.data is not None:
        try:
            json.loads(args.data)
        except ValueError as e:
            p.error(f"--data is not JSON: {e}")
    return args


async def main(argv):
    args = parse_args(argv)
    capture = Capture()
    http = httpx.AsyncClient(
        headers={"A2A-Version": "1.0", **({"Authorization": f"Bearer {args.token}"} if args.token else {})},
        timeout=args.timeout,
        event_hooks={"request": [capture.reset], "response": [capture]},
    )
    rc = 0
    try:
        out = await run(args, http)
    except NoAnswer as e:
        if e.__cause__ is not None and answered_error(capture):  # an error body the SDK could not place
            out = error_object(e.__cause__, capture)
        else:
            out, rc = no_answer(str(e), None), 3
    except NotImplementedError as e:  # e.g. ListTasks over the SDK's v0.3 compat transport
        out, rc = no_answer(f"the SDK cannot do this here: {e}", type(e).__name__), 3
    except json_format.ParseError as e:
        out, rc = no_answer(f"an answer that is not A2A: {e}", type(e).__name__), 3
    except A2AError as e:
        if transport_failure(e):
            out, rc = no_answer(str(e), type(e).__name__), 3
        elif answered_error(capture):
            out = error_object(e, capture)
        else:
            out, rc = no_answer(f"an answer that is not A2A: {e}", type(e).__name__), 3
    finally:
        await http.aclose()
    print(json.dumps(out))
    if rc:
        print(f"a2a_hub_client: {out['error']['message']}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
