"""Outside-client matrix: the official Python a2a-sdk 1.3 (PyPI a2a-sdk==1.3.0,
.tools/venv, scripts/requirements-a2a.txt), joining the hub the way the SDK's
README example (a2a-samples helloworld/test_client.py) does it:

  1. `A2ACardResolver(httpx_client, base_url=URL).get_agent_card()`: the
     resolver's defaults (URL/.well-known/agent-card.json), NO credential on
     the card fetch;
  2. `ClientFactory(ClientConfig(streaming=False, ...)).create(card,
     interceptors=[AuthInterceptor(credentials)])`: the SDK's own auth
     interceptor, which puts `Authorization: Bearer TOKEN` on each call for
     the security scheme the card itself declares (securitySchemes +
     securityRequirements): the token is on calls only, and only if the card
     says how. (`--auth header` instead sets the header on each call by the
     ClientCallContext, for telling a card without a usable scheme from a
     refused token.)
  3. `client.send_message(SendMessageRequest(message=...))`.

The only non-default thing is the httpx client handed to the SDK (the
factory's own `httpx_client` option): it has no auth header, just a response
event hook that keeps the last response's status and body (hub_answer.py's
Capture), because the SDK drops the hub's google.rpc.ErrorInfo `reason` (see
../a2a_hub_client.py for exactly what it keeps). Never a second request.

usage: python a2a_sdk.py URL TOKEN card
       python a2a_sdk.py URL TOKEN send-data JSON [--skill ID] [--transport jsonrpc|http+json]
       python a2a_sdk.py URL TOKEN send-text TEXT [--skill ID] [--transport jsonrpc|http+json]
output (one JSON object):
  card       {"name", "skills": [ids], "interfaces": [{"url", "binding", "version"}],
              "extended_card": capabilities.extendedAgentCard (bool) or null}
  send-*     {"answer": {"kind": "message"|"task", "data", "text", "state", "metadata"}}: the
             first data part and first text part (a task's artifacts, else its
             status message), state as v0.3 spells it (completed, ...), null
             for a message; metadata the answer's (the hub's receipt is there)
  error      {"error": {"code", "message", "reason", "http_status"}} (exit 0);
             code: the JSON-RPC error code, or for HTTP+JSON the
             google.rpc.Status code, or the HTTP status when the body has no
             error; reason: the ErrorInfo reason in error.data/error.details
exit: 0 any answer, 3 no answer (code null, cause on stderr), 2 usage.
"""

import asyncio
import sys

import httpx
from google.protobuf import json_format

from a2a.client import (
    A2ACardResolver,
    AuthInterceptor,
    ClientCallContext,
    ClientConfig,
    ClientFactory,
)
from a2a.types import SendMessageRequest

from matrix_common import Capture, NoAnswer, a2a_parser, emit, parse
from sdk13 import Token, build_message, card_summary, message_answer, task_answer  # ../sdk13.py
from sdk13_failures import failure_output

PROG = "a2a_sdk"
BINDINGS = {"jsonrpc": "JSONRPC", "http+json": "HTTP+JSON"}


async def run(args, http):
    resolver = A2ACardResolver(httpx_client=http, base_url=args.url)
    card = await resolver.get_agent_card()
    if args.op == "card":
        return card_summary(card)
    config = ClientConfig(streaming=False, httpx_client=http, supported_protocol_bindings=[BINDINGS[args.transport]])
    try:
        if args.auth == "interceptor":
            client = ClientFactory(config).create(card, interceptors=[AuthInterceptor(Token(args.token))])
            context = None
        else:
            client = ClientFactory(config).create(card)
            context = ClientCallContext(service_parameters={"Authorization": f"Bearer {args.token}"} if args.token else {})
    except ValueError as e:  # "no compatible transports found."
        offered = ", ".join(f"{i.protocol_binding} at {i.url}" for i in card.supported_interfaces) or "none"
        raise NoAnswer(f"the card offers no {BINDINGS[args.transport]} interface ({e}); it offers: {offered}") from None
    try:
        try:
            events = [e async for e in client.send_message(SendMessageRequest(message=build_message(args)), context=context)]
        except ValueError as e:  # "Response has neither task nor message"
            raise NoAnswer(f"an answer that is not A2A: {e}") from e
    finally:
        await client.close()
    if not events:
        raise NoAnswer("the agent answered nothing")
    last = events[-1]
    if last.HasField("message"):
        return {"answer": message_answer(last.message)}
    if last.HasField("task"):
        return {"answer": task_answer(last.task)}
    raise NoAnswer(f"unexpected answer: {json_format.MessageToDict(last)}")


async def main(argv):
    def auth_option(p):
        p.add_argument("--auth", choices=["interceptor", "header"], default="interceptor",
                       help="how the token goes on calls (default: the SDK's AuthInterceptor, per the card's scheme)")

    parser = a2a_parser("Outside-client matrix: a2a-sdk 1.3, README way.", transports=list(BINDINGS), extra=auth_option)
    args = parse(parser, argv)
    capture = Capture()
    http = httpx.AsyncClient(timeout=args.timeout, event_hooks={"request": [capture.reset], "response": [capture]})
    try:
        out, rc = await run(args, http), 0
    except Exception as e:  # noqa: BLE001  (failure_output re-raises what is no answer)
        out, rc = failure_output(e, capture)
    finally:
        await http.aclose()
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
