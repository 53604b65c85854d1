"""Outside-client matrix: the official Python a2a-sdk on its 0.3 line (PyPI
a2a-sdk==0.3.26, .tools/venv03, scripts/requirements-a2a03.txt), joining the
hub the way the SDK's 0.3 README example (a2a-samples helloworld
test_client.py) does it:

  1. `A2ACardResolver(httpx_client, base_url=URL).get_agent_card()`: the
     resolver's defaults (URL/.well-known/agent-card.json), NO credential on
     the card fetch; the 0.3 SDK reads the card's v0.3 fields (url,
     preferredTransport, additionalInterfaces, security, securitySchemes in
     their OpenAPI shape);
  2. `ClientFactory(ClientConfig(streaming=False, ...)).create(card,
     interceptors=[AuthInterceptor(credentials)])`: the SDK's own auth
     interceptor puts `Authorization: Bearer TOKEN` on each call for the
     scheme the card's `security` names (`--auth header`: a plain
     interceptor that sets the header whatever the card says); over
     HTTP+JSON, whose 0.3 transport ignores interceptors, the token goes in
     the call's ClientCallContext (state["http_kwargs"]["headers"]);
  3. `client.send_message(Message(...))` (JSON-RPC `message/send`, or
     HTTP+JSON `POST /v1/message:send`). The 0.3 SDK sends no A2A-Version
     header: to the hub that is a v0.3 client.

As in a2a_sdk.py the httpx client handed to the factory only carries a
response hook (hub_answer.py's Capture) so the ErrorInfo reason can be read
from the raw body when the SDK drops it (0.3 keeps a JSON-RPC error's `data`
as sent; a non-2xx answer becomes A2AClientHTTPError without the body).

usage, output and exit codes: as a2a_sdk.py (same JSON objects), but
  card  interfaces are the top-level url/preferredTransport, then
        additionalInterfaces, each with the card's protocolVersion;
        extended_card is supportsAuthenticatedExtendedCard
  send-data's JSON must be an object (a v0.3 DataPart's data is one).
"""

import asyncio
import sys
import uuid

import httpx
from google.protobuf.json_format import ParseError

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.errors import A2AClientError, A2AClientHTTPError, A2AClientJSONRPCError, A2AClientTimeoutError
from a2a.client.middleware import ClientCallContext, ClientCallInterceptor
from a2a.types import DataPart, Message, Part, Role, Task, TextPart, TransportProtocol

from matrix_common import (
    Capture,
    NoAnswer,
    a2a_error,
    a2a_parser,
    emit,
    error_info,
    no_answer_a2a,
    parse,
    raw_error,
)
from sdk03 import first_parts  # noqa: E402  (../sdk03.py)

PROG = "a2a_sdk03"
BINDINGS = {"jsonrpc": TransportProtocol.jsonrpc, "http+json": TransportProtocol.http_json}


class Token(CredentialService):
    """The caller's token for whatever scheme the card names (the SDK's extension point)."""

    def __init__(self, token):
        self.token = token

    async def get_credentials(self, security_scheme_name, context):
        return self.token or None


class Header(ClientCallInterceptor):
    """--auth header: the bearer header on each call, whatever the card declares."""

    def __init__(self, token):
        self.token = token

    async def intercept(self, method_name, request_payload, http_kwargs, agent_card, context):
        if self.token:
            http_kwargs.setdefault("headers", {})["Authorization"] = f"Bearer {self.token}"
        return request_payload, http_kwargs


def card_summary(card):
    version = card.protocol_version
    binding = card.preferred_transport.value if hasattr(card.preferred_transport, "value") else card.preferred_transport
    interfaces = [{"url": card.url, "binding": binding or "JSONRPC", "version": version}]
    for extra in card.additional_interfaces or []:
        t = extra.transport.value if hasattr(extra.transport, "value") else extra.transport
        entry = {"url": extra.url, "binding": t, "version": version}
        if entry not in interfaces:
            interfaces.append(entry)
    return {
        "name": card.name,
        "skills": [s.id for s in card.skills],
        "interfaces": interfaces,
        "extended_card": card.supports_authenticated_extended_card,
    }


def build_message(args):
    if args.op == "send-text":
        part = Part(root=TextPart(text=args.text))
    else:
        part = Part(root=DataPart(data=args.value))
    return Message(
        role=Role.user,
        message_id=str(uuid.uuid4()),
        parts=[part],
        metadata={"skill": args.skill} if args.skill else None,
    )


async def run(args, http):
    card = await A2ACardResolver(httpx_client=http, base_url=args.url).get_agent_card()
    if args.op == "card":
        return card_summary(card)
    config = ClientConfig(streaming=False, httpx_client=http, supported_transports=[BINDINGS[args.transport]])
    auth = AuthInterceptor(Token(args.token)) if args.auth == "interceptor" else Header(args.token)
    try:
        client = ClientFactory(config).create(card, interceptors=[auth])
    except ValueError as e:  # "no compatible transports found."
        raise NoAnswer(f"the card offers no {BINDINGS[args.transport].value} interface: {e}") from None
    # The 0.3 SDK's HTTP+JSON transport never runs interceptors (rest.py
    # `_apply_interceptors` is a TODO stub), so there the token goes the
    # other per-call way that transport reads: ClientCallContext.state's
    # `http_kwargs`. JSON-RPC gets it from the interceptor above.
    context = None
    if args.transport == "http+json" and args.token:
        context = ClientCallContext(state={"http_kwargs": {"headers": {"Authorization": f"Bearer {args.token}"}}})
    try:
        events = [e async for e in client.send_message(build_message(args), context=context)]
    finally:
        await client.close()
    if not events:
        raise NoAnswer("the agent answered nothing")
    last = events[-1]
    if isinstance(last, Message):
        data, text = first_parts([last.parts])
        return {"answer": {"kind": "message", "data": data, "text": text, "state": None}}
    task = last[0] if isinstance(last, tuple) else last
    if not isinstance(task, Task):
        raise NoAnswer(f"unexpected answer: {last!r}")
    data, text = first_parts([a.parts for a in task.artifacts or []])
    sdata, stext = first_parts([task.status.message.parts] if task.status.message else [])
    return {
        "answer": {
            "kind": "task",
            "data": data if data is not None else sdata,
            "text": text if text is not None else stext,
            "state": task.status.state.value,
        }
    }


async def main(argv):
    def auth_option(p):
        p.add_argument("--auth", choices=["interceptor", "header"], default="interceptor",
                       help="how the token goes on calls (default: the SDK's AuthInterceptor, per the card's security)")

    args = parse(a2a_parser("Outside-client matrix: a2a-sdk 0.3, README way.", transports=list(BINDINGS), extra=auth_option), argv)
    capture = Capture()
    http = httpx.AsyncClient(timeout=args.timeout, event_hooks={"request": [capture.reset], "response": [capture]})
    rc = 0
    try:
        out = await run(args, http)
    except NoAnswer as e:
        out, rc = no_answer_a2a(str(e)), 3
    except A2AClientJSONRPCError as e:  # a JSON-RPC error in a 2xx answer: the SDK keeps data as sent
        err = e.error
        out = a2a_error(err.code, err.message, error_info(err.data).get("reason"), capture.status)
    except A2AClientHTTPError as e:
        answered = raw_error(capture, e.status_code, e.message) if capture.status is not None else None
        if answered is None:  # the SDK's 503 for "no HTTP answer at all"
            out, rc = no_answer_a2a(f"{type(e).__name__}: {e}"), 3
        else:
            out = answered
    except (A2AClientTimeoutError, A2AClientError, ValueError, ParseError) as e:
        # a timeout, a card or body the SDK cannot validate (pydantic's
        # ValidationError is a ValueError; the HTTP+JSON transport's protobuf
        # ParseError)
        out, rc = no_answer_a2a(f"{type(e).__name__}: {e}"), 3
    finally:
        await http.aclose()
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
