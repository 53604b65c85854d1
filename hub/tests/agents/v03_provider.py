"""A v0.3-only A2A provider agent, for the hub's tests of its v0.3 bridge: a
real process on the official Python a2a-sdk 0.3 line (run it with
.tools/venv03/bin/python), so the hub meets an agent this project did not
write, one that speaks only A2A v0.3 (v0.3 card, v0.3 JSON-RPC methods such as
message/send, lowercase roles and `kind`-tagged parts).

usage:
  WS_TOKEN_RATES=tok python v03_provider.py --system ratesdesk --name "Rates desk" \\
      --listen 127.0.0.1:4201 --token-env WS_TOKEN_RATES

It serves, on the SDK's server app (A2AStarletteApplication +
DefaultRequestHandler + an AgentExecutor, under uvicorn):
  GET  /.well-known/agent-card.json  its v0.3 card (public): protocolVersion
       "0.3.0", url http://HOST:PORT/, preferredTransport JSONRPC, one skill
       rates.consult, a bearer `securitySchemes` entry and a `security`
       requirement naming it (the SDK also serves it at the older
       /.well-known/agent.json)
  GET  /health  {"service": "wall-street-peer", "system", "name",
       "version": "0.3-fixture"}, public: how the hub's prober tells a peer
  POST /       JSON-RPC; needs `Authorization: Bearer $TOKEN_ENV` or answers
       401 (WWW-Authenticate: Bearer) with the JSON-RPC error body the
       reference peers send, code -32000
The one capability, rates.consult (kind consult), takes a data part
{"capability": "rates.consult", "input": {"question": str}} or a text part
(the question), and answers with an agent Message of one data part
{"pair": "EUR/USD", "rate": 1.0842, "answer": "<a sentence>"} and one text
part; the answer never repeats the question. A data part naming another
capability (or message metadata {"skill": other}) is JSON-RPC -32602 naming
it; a data part without a string input.question is -32602 too.
It logs one line per JSON-RPC call to stderr (method, HTTP status, outcome)
and exits 0 on SIGTERM or Ctrl-C (uvicorn's graceful shutdown).
"""

import argparse
import asyncio
import hmac
import json
import os
import signal
import socket
import sys
import uuid

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentProvider,
    AgentSkill,
    DataPart,
    HTTPAuthSecurityScheme,
    InvalidParamsError,
    Message,
    Part,
    Role,
    SecurityScheme,
    TextPart,
    UnsupportedOperationError,
)
from a2a.utils.errors import ServerError

CAPABILITY = "rates.consult"
VERSION = "0.3-fixture"
PAIR, RATE = "EUR/USD", 1.0842


def log(line):
    print(f"v03_provider: {line}", file=sys.stderr, flush=True)


def invalid(message):
    return ServerError(error=InvalidParamsError(message=message))


def question_of(message):
    """The consult's question from the caller's message, or ServerError(-32602)."""
    skill = (message.metadata or {}).get("skill")
    if skill is not None and skill != CAPABILITY:
        raise invalid(f"unknown capability {skill!r}; this agent provides: {CAPABILITY}")
    for part in message.parts:
        p = part.root
        if isinstance(p, DataPart):
            data = p.data
            capability = data.get("capability", skill)
            if capability != CAPABILITY:
                if capability is None:
                    raise invalid(f'the data part names no capability; send {{"capability": "{CAPABILITY}", "input": {{"question": "..."}}}}')
                raise invalid(f"unknown capability {capability!r}; this agent provides: {CAPABILITY}")
            payload = data.get("input", data) if "capability" in data else data
            question = payload.get("question") if isinstance(payload, dict) else None
            if not isinstance(question, str) or not question.strip():
                raise invalid(f"{CAPABILITY} takes input {{\"question\": <non-empty string>}}")
            return question
    for part in message.parts:
        if isinstance(part.root, TextPart) and part.root.text.strip():
            return part.root.text
    raise invalid(f"no question: send a text part, or a data part {{\"capability\": \"{CAPABILITY}\", \"input\": {{\"question\": \"...\"}}}}")


class RatesHandler(DefaultRequestHandler):
    """The SDK's handler, refusing a bad call before it starts an execution.

    (A ServerError raised inside AgentExecutor.execute reaches the caller too,
    but the SDK then logs it with a traceback as "Agent execution failed".)
    """

    async def on_message_send(self, params, context=None):
        question_of(params.message)
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params, context=None):
        question_of(params.message)
        async for event in super().on_message_send_stream(params, context):
            yield event


class RatesExecutor(AgentExecutor):
    """Answers rates.consult with a fixed EUR/USD rate (the call was validated by RatesHandler)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        question_of(context.message)  # the answer does not depend on the question
        answer = f"The reference {PAIR} rate on this desk is {RATE}, a fixed fixture value rather than a live quote."
        await event_queue.enqueue_event(
            Message(
                role=Role.agent,
                message_id=str(uuid.uuid4()),
                context_id=context.context_id,
                parts=[
                    Part(root=DataPart(data={"pair": PAIR, "rate": RATE, "answer": answer})),
                    Part(root=TextPart(text=f"{PAIR} {RATE}")),
                ],
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise ServerError(error=UnsupportedOperationError(message="rates.consult answers at once; nothing to cancel"))


class BearerGate:
    """ASGI wrapper: bearer token on POST / (the JSON-RPC endpoint), one log line per call."""

    UNAUTHORIZED = json.dumps(
        {"error": {"code": -32000, "message": "unauthorized: missing or wrong bearer token"}, "id": None, "jsonrpc": "2.0"}
    ).encode()

    def __init__(self, app, token):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        auth = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(auth, self.expected):
            log("POST / http=401 outcome=unauthorized")
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": self.UNAUTHORIZED})
            return
        body, more = b"", True
        while more:
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        delivered = False

        async def replay():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        status, chunks = None, []

        async def record(msg):
            nonlocal status
            if msg["type"] == "http.response.start":
                status = msg["status"]
            elif msg["type"] == "http.response.body":
                chunks.append(msg.get("body", b""))
            await send(msg)

        await self.app(scope, replay, record)
        try:
            answer = json.loads(b"".join(chunks))
            error = answer.get("error") if isinstance(answer, dict) else None
            outcome = f"error {error.get('code')} {error.get('message')!r}" if error else "ok"
        except ValueError:
            outcome = "stream" if status == 200 else "no-json"
        log(f"POST / method={method} http={status} outcome={outcome}")


def agent_card(name, system, base_url):
    return AgentCard(
        name=name,
        description=f"{name}: a v0.3-only A2A agent (a2a-sdk 0.3 fixture) providing {CAPABILITY}.",
        url=base_url,
        version=VERSION,
        protocol_version="0.3.0",
        preferred_transport="JSONRPC",
        capabilities=AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=[
            AgentSkill(
                id=CAPABILITY,
                name="Rates consult",
                description="Answers a question about exchange rates with the desk's EUR/USD rate.",
                tags=["consult", system],
                examples=[json.dumps({"capability": CAPABILITY, "input": {"question": "What is EUR/USD today?"}})],
            )
        ],
        provider=AgentProvider(organization=name, url=base_url),
        security_schemes={
            "bearer": SecurityScheme(root=HTTPAuthSecurityScheme(scheme="bearer", description="The token the hub holds for this agent."))
        },
        security=[{"bearer": []}],
    )


def build_app(system, name, base_url, token):
    card = agent_card(name, system, base_url)
    handler = RatesHandler(agent_executor=RatesExecutor(), task_store=InMemoryTaskStore())

    async def health(_request):
        return JSONResponse({"service": "wall-street-peer", "system": system, "name": name, "version": VERSION})

    app = Starlette(routes=[Route("/health", health, methods=["GET"])])
    A2AStarletteApplication(agent_card=card, http_handler=handler).add_routes_to_app(app)
    return BearerGate(app, token)


def main(argv):
    p = argparse.ArgumentParser(description="A v0.3-only A2A provider (a2a-sdk 0.3 fixture).")
    p.add_argument("--system", required=True, help="system id, as the hub's topology names it")
    p.add_argument("--name", required=True, help="display name")
    p.add_argument("--listen", required=True, help="HOST:PORT")
    p.add_argument("--token-env", required=True, help="env var holding the bearer token callers must send")
    args = p.parse_args(argv)
    host, sep, port = args.listen.rpartition(":")
    if not sep or not port.isdigit():
        p.error(f"--listen must be HOST:PORT, not {args.listen!r}")
    token = os.environ.get(args.token_env, "")
    if not token:
        p.error(f"env var {args.token_env} is unset or empty")
    # Bound here, not by uvicorn: with port 0 the system picks one, and the
    # card and the log line below name the one it picked.
    bare = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in bare else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((bare, int(port)))
    base_url = f"http://{host}:{sock.getsockname()[1]}/"
    app = build_app(args.system, args.name, base_url, token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal
    # with the handlers it found installed: with the default ones the process
    # would die of the signal (exit 143). These make that re-raise a no-op, so
    # a stop by SIGTERM or Ctrl-C exits 0.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    log(f"system={args.system} listening on {base_url} (card {base_url}.well-known/agent-card.json)")
    asyncio.run(server.serve(sockets=[sock]))
    if not server.started:
        return 1
    log(f"system={args.system} stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
