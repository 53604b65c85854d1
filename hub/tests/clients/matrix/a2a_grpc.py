"""Outside-client matrix: the official Python a2a-sdk 1.3 over gRPC (PyPI
a2a-sdk[grpc]==1.3.0, .tools/venv, scripts/requirements-a2a.txt), joining
the hub the way the SDK's README shows for gRPC:

  1. `A2ACardResolver(httpx_client, base_url=URL).get_agent_card()`: the
     resolver's defaults, NO credential on the card fetch;
  2. `ClientFactory(ClientConfig(supported_protocol_bindings=["GRPC"],
     grpc_channel_factory=grpc.aio.insecure_channel)).create(card,
     interceptors=[AuthInterceptor(credentials)])`: the factory picks the
     card's gRPC interface (and puts the interface's `tenant` on every
     request, as it does for any interface that names one); the SDK's own
     auth interceptor puts `authorization: Bearer TOKEN` in the call's
     metadata for the scheme the card declares;
  3. `client.send_message(SendMessageRequest(message=...))`, unary, or
     with `--stream` the SDK's streaming call (SendStreamingMessage).

usage: python a2a_grpc.py URL TOKEN card
       python a2a_grpc.py URL TOKEN send-data JSON [--skill ID] [--stream]
       python a2a_grpc.py URL TOKEN send-text TEXT [--skill ID] [--stream]
output (one JSON object):
  card       {"name", "skills", "interfaces", "extended_card", "grpc": {"url",
              "tenant"}}: the card as the default resolver got it, and the
              gRPC interface the factory would pick (null: none)
  send-*     {"answer": {"kind", "data", "text", "state"}, "binding": "GRPC",
              "events": [kinds of the streamed events] (with --stream)}
  error      {"error": {"code", "message", "reason", "http_status": null}}
             (exit 0): code is the gRPC status name (PERMISSION_DENIED, ...),
             reason the first google.rpc.ErrorInfo's in the status details
             (grpc-status-details-bin), as the SDK received them
exit: 0 any answer, 3 no answer (code null, cause on stderr), 2 usage.
"""

import asyncio
import sys

import grpc
import httpx
from google.protobuf import json_format
from google.rpc import error_details_pb2

from a2a.client import A2ACardResolver, AuthInterceptor, ClientConfig, ClientFactory
from a2a.client.errors import AgentCardResolutionError
from a2a.types import SendMessageRequest
from a2a.utils.grpc_status import status_from_call

from matrix_common import NoAnswer, a2a_error, a2a_parser, emit, no_answer_a2a, parse
from sdk13 import Token, build_message, card_summary, message_answer, state_name, task_answer  # ../sdk13.py

PROG = "a2a_grpc"
GRPC = "GRPC"


def grpc_interface(card):
    for i in card.supported_interfaces:
        if i.protocol_binding == GRPC:
            return {"url": i.url, "tenant": i.tenant or None}
    return None


def answer_of(event):
    """The answer in one event of the SDK (a StreamResponse)."""
    if event.HasField("message"):
        return message_answer(event.message)
    if event.HasField("task"):
        return task_answer(event.task)
    if event.HasField("status_update"):
        update = event.status_update
        return {**message_answer(update.status.message), "kind": "status-update", "state": state_name(update.status.state)}
    raise NoAnswer(f"unexpected answer: {json_format.MessageToDict(event)}")


async def run(args, http):
    card = await A2ACardResolver(httpx_client=http, base_url=args.url).get_agent_card()
    if args.op == "card":
        return {**card_summary(card), "grpc": grpc_interface(card)}
    config = ClientConfig(
        streaming=args.stream,
        supported_protocol_bindings=[GRPC],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    try:
        client = ClientFactory(config).create(card, interceptors=[AuthInterceptor(Token(args.token))])
    except ValueError as e:  # "no compatible transports found."
        raise NoAnswer(f"the card offers no gRPC interface ({e})") from None
    try:
        events = [e async for e in client.send_message(SendMessageRequest(message=build_message(args)))]
    finally:
        await client.close()
    if not events:
        raise NoAnswer("the agent answered nothing")
    out = {"answer": answer_of(events[-1]), "binding": GRPC}
    if args.stream:
        out["events"] = [e.WhichOneof("payload") for e in events]
    return out


def grpc_failure(exc):
    """The gRPC error under the SDK's exception, read as the matrix prints
    errors; None when there is none."""
    seen = exc
    while seen is not None and not isinstance(seen, grpc.aio.AioRpcError):
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return None
    reason = None
    status = status_from_call(seen)
    for detail in status.details if status is not None else []:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
            break
    if seen.code() in (grpc.StatusCode.UNAVAILABLE,) and reason is None:
        return None  # no server answered
    return a2a_error(seen.code().name, seen.details(), reason, None)


async def main(argv):
    def options(p):
        p.add_argument("--stream", action="store_true", help="the SDK's streaming call (SendStreamingMessage)")

    args = parse(a2a_parser("Outside-client matrix: a2a-sdk 1.3 over gRPC, README way.", extra=options), argv)
    http = httpx.AsyncClient(timeout=args.timeout)
    try:
        out, rc = await asyncio.wait_for(run(args, http), args.timeout), 0
    except NoAnswer as e:
        out, rc = no_answer_a2a(str(e)), 3
    except AgentCardResolutionError as e:
        out, rc = no_answer_a2a(f"card unreadable: {e}"), 3
    except Exception as e:  # noqa: BLE001  (an answer only if the server sent a gRPC status)
        answered = grpc_failure(e)
        if answered is None:
            out, rc = no_answer_a2a(f"{type(e).__name__}: {e}"), 3
        else:
            out, rc = answered, 0
    finally:
        await http.aclose()
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
