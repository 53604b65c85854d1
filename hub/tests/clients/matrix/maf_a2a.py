"""Outside-client matrix: Microsoft Agent Framework's `A2AAgent` (PyPI
agent-framework-a2a==1.0.0b261022 on agent-framework-core 1.23.0 and a2a-sdk
1.3.0; .tools/venv, scripts/requirements-maf.txt), joining the hub the way
MAF's documentation ("A2A Integration", Python, "Connecting to an A2A
Agent" and "Authentication"; sample 02-agents/a2a/agent_with_a2a.py) shows:

  1. `A2ACardResolver(httpx_client=..., base_url=URL).get_agent_card()`: the
     resolver's defaults, NO credential on the card fetch;
  2. `A2AAgent(name=card.name, agent_card=card, url=URL,
     auth_interceptor=...)` (non-streaming `run()` uses its JSON-RPC client,
     MAF's default binding list ["JSONRPC"]);
  3. `await agent.run(message)`.

Auth: MAF documents `auth_interceptor=` ("Use an AuthInterceptor for secured
A2A endpoints"). Its doc example subclasses a2a's AuthInterceptor with an
`intercept(request)` method, which does not exist in a2a-sdk 1.x (the 1.x
interceptor is `before(args)`/`after(args)`, and the subclass would skip
AuthInterceptor.__init__): so this uses the SDK's AuthInterceptor as it is,
with a CredentialService giving the caller's token; it puts
`Authorization: Bearer TOKEN` on each call for the scheme the card declares.
`http_client=` (MAF's documented option for a caller-owned httpx client) is
a plain httpx client with no auth header, only a response event hook keeping
the last response (hub_answer.py's Capture; MAF and the SDK drop the hub's
ErrorInfo reason) and a request hook that keeps the last request body, so
`--show-wire` can print the A2A parts MAF put on the wire. Never a second
request.

Input, with MAF's own content types (agent_framework.Message / Content):
  send-text TEXT  `Content.from_text(TEXT)`   -> A2A text part
  send-data JSON  `Content.from_data(data=JSON bytes,
                   media_type="application/json")` -> what MAF makes of it
                   (A2AAgent._prepare_message_for_a2a, case "data"): an A2A
                   **raw** part, {"raw": base64(JSON bytes), "mediaType":
                   "application/json"}, NOT a `data` part: MAF has no content
                   type that becomes an A2A data part.
  --skill ID      the message's additional_properties {"a2a": {"skill": ID}},
                  which MAF sends as the A2A message metadata.
Answer: MAF turns an A2A data part into a text Content (its JSON), so the
answer is read from the A2A objects MAF keeps in
`AgentResponse.raw_representation` (the SDK's Task or Message): first data
part, first text part, kind and state, as a2a_sdk.py reads them.

usage: python maf_a2a.py URL TOKEN card | send-data JSON [--skill ID] | send-text TEXT [--skill ID]
       [--show-wire]  adds "wire": {"parts": [...]} (the request's message parts as sent)
output, exit codes: as a2a_sdk.py.
"""

import asyncio
import json
import sys

import httpx

from a2a.client import A2ACardResolver, AuthInterceptor
from a2a.types import Message as A2AMessage
from a2a.types import Task as A2ATask
from agent_framework import Content, Message
from agent_framework.a2a import A2AAgent

from matrix_common import Capture, NoAnswer, a2a_parser, emit, parse
from sdk13 import Token, card_summary, message_answer, task_answer  # ../sdk13.py
from sdk13_failures import failure_output

PROG = "maf_a2a"


class Wire:
    """httpx request hook: the JSON body of the last request (to show MAF's parts)."""

    def __init__(self):
        self.body = None

    async def __call__(self, request):
        try:
            self.body = json.loads(request.content or b"null")
        except ValueError:
            self.body = None

    def parts(self):
        body = self.body if isinstance(self.body, dict) else {}
        params = body.get("params", body)
        return ((params or {}).get("message") or {}).get("parts")


def summarize(response):
    """From the A2A objects MAF mapped (AgentResponse.raw_representation, the
    SDK's Task/Message, newest last); MAF's own messages flatten a data part
    into a text Content holding its JSON."""
    raws = response.raw_representation
    raws = raws if isinstance(raws, list) else [raws]
    last = next((r for r in reversed(raws) if isinstance(r, (A2ATask, A2AMessage))), None)
    if isinstance(last, A2ATask):
        return task_answer(last)
    if isinstance(last, A2AMessage):
        return message_answer(last)
    raise NoAnswer(f"MAF mapped no A2A message or task: {raws!r}")


async def run(args, http):
    resolver = A2ACardResolver(httpx_client=http, base_url=args.url)
    card = await resolver.get_agent_card()
    if args.op == "card":
        return card_summary(card)
    if args.op == "send-text":
        contents = [Content.from_text(args.text)]
    else:
        contents = [Content.from_data(data=json.dumps(args.value).encode(), media_type="application/json")]
    message = Message(role="user", contents=contents, additional_properties={"a2a": {"skill": args.skill}} if args.skill else None)
    async with A2AAgent(
        name=card.name,
        agent_card=card,
        url=args.url,
        http_client=http,
        auth_interceptor=AuthInterceptor(Token(args.token)),
        timeout=args.timeout,
    ) as agent:
        response = await agent.run(message)
    return {"answer": summarize(response)}


async def main(argv):
    def wire_option(p):
        p.add_argument("--show-wire", action="store_true", help='add "wire": {"parts": the request\'s A2A parts as MAF sent them}')

    args = parse(a2a_parser("Outside-client matrix: Microsoft Agent Framework A2AAgent.", extra=wire_option), argv)
    capture, wire = Capture(), Wire()
    http = httpx.AsyncClient(timeout=args.timeout, event_hooks={"request": [capture.reset, wire], "response": [capture]})
    try:
        out, rc = await run(args, http), 0
    except Exception as e:  # noqa: BLE001  (failure_output re-raises what is no answer)
        out, rc = failure_output(e, capture, wrapped=True)
    finally:
        await http.aclose()
    if args.show_wire and args.op != "card":
        out["wire"] = {"parts": wire.parts()}
    return emit(PROG, out, rc)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
