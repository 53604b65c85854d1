"""Outside-client matrix: CrewAI's A2A delegation (PyPI crewai[a2a]==1.15.30
on a2a-sdk 0.3.26; .tools/venv-crewai, scripts/requirements-crewai.txt),
joining the hub the way CrewAI's documentation ("Agent-to-Agent (A2A)
Protocol", Basic Configuration and Authentication) shows:

  Agent(role=..., goal=..., backstory=..., llm=LLM(...),
        a2a=A2AClientConfig(endpoint=URL, auth=BearerTokenAuth(token=TOKEN)))
  Crew(agents=[agent], tasks=[Task(description=..., expected_output=...,
       agent=agent)]).kickoff()

URL is what a user would paste: the bare URL of the provider's own host
(http://helpdesk.localhost:PORT). Nothing else of CrewAI's is configured:
its defaults discover the card at URL/.well-known/agent-card.json (with the
bearer token on it), negotiate the transport from the card, and send with
`message/stream` (StreamingConfig, the default update mechanism).

CrewAI's delegation is LLM-driven: the agent's LLM is asked, with the card's
description and skills in its prompt and CrewAI's AgentResponse model as
structured output ({a2a_ids, message, is_a2a}), whether to delegate and
what to send; after the remote agent answers, it is asked again, with the
A2A conversation in its prompt, for the final answer. The LLM here is
scripts/model-standin, an OpenAI-compatible server answering from a script
(hub/tests/clients/matrix/crewai_standin.json), reached through CrewAI's own
OpenAI provider: `LLM(model="openai/standin", base_url=--model-url)`. Its
request log is what CrewAI showed its LLM.

The answer is read from CrewAI only, never from the hub: its event bus
(crewai.events) reports the card it fetched (A2AAgentCardFetchedEvent), the
transport and URL it negotiated from the card (A2ATransportNegotiatedEvent),
what the remote agent answered (A2AResponseReceivedEvent: CrewAI keeps the
**text** parts only; data parts never reach its events or its result, so
"data" is always null), and how the conversation ended
(A2AConversationCompletedEvent); "result" is the crew's own output (`.raw`).

  --trust-remote-completion  A2AClientConfig(trust_remote_completion_status=True),
                             CrewAI's documented option: the remote agent's
                             completed answer IS the result, no second LLM call.

usage: python crewai_a2a.py URL TOKEN send-text TEXT --model-url http://127.0.0.1:PORT/v1
       [--trust-remote-completion] [--timeout S]
output: {"answer": {"data": null, "text": ..., "state": ..., "result": ...,
         "card": {...}, "transport": {...}}}, or {"error": {...}} when the
         remote agent's answer was a failure; exit codes as matrix_common.py
         (3: no answer at all: card unreadable, nothing received).
CrewAI's own console output goes to stderr: stdout holds the one JSON object.
"""

import argparse
import atexit
import os
import shutil
import sys
import tempfile

# CrewAI prints to stdout (its console, event-pairing warnings): everything
# written to fd 1 goes to stderr, the JSON object to the saved real stdout.
STDOUT = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
# No telemetry or trace upload, and CrewAI's local state (its kickoff-output
# database under the XDG data directory, a key under ~/.local/share/crewai)
# in a throwaway home, removed at exit.
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
HOME = tempfile.mkdtemp(prefix="crewai-a2a-")
atexit.register(shutil.rmtree, HOME, True)
os.environ["HOME"] = HOME
os.environ["XDG_DATA_HOME"] = os.path.join(HOME, ".local", "share")

import json  # noqa: E402

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.a2a import A2AClientConfig  # noqa: E402
from crewai.a2a.auth import BearerTokenAuth  # noqa: E402
from crewai.events import crewai_event_bus  # noqa: E402
from crewai.events.types.a2a_events import (  # noqa: E402
    A2AAgentCardFetchedEvent,
    A2AAuthenticationFailedEvent,
    A2AConnectionErrorEvent,
    A2AConversationCompletedEvent,
    A2AResponseReceivedEvent,
    A2ATransportNegotiatedEvent,
)

from matrix_common import a2a_error, emit, no_answer_a2a  # noqa: E402

PROG = "crewai_a2a"


class Seen:
    """What CrewAI's event bus reported, in order."""

    def __init__(self):
        self.cards, self.transports, self.responses, self.completed, self.errors = [], [], [], [], []
        on = crewai_event_bus.on
        on(A2AAgentCardFetchedEvent)(lambda _s, e: self.cards.append(
            {"endpoint": e.endpoint, "name": e.a2a_agent_name, "url": (e.agent_card or {}).get("url"),
             "skills": [s.get("id") for s in (e.agent_card or {}).get("skills") or []]}))
        on(A2ATransportNegotiatedEvent)(lambda _s, e: self.transports.append(
            {"binding": e.negotiated_transport, "url": e.negotiated_url}))
        on(A2AResponseReceivedEvent)(lambda _s, e: self.responses.append(
            {"text": e.response, "state": e.status, "final": e.final}))
        on(A2AConversationCompletedEvent)(lambda _s, e: self.completed.append(
            {"status": e.status, "final_result": e.final_result, "error": e.error, "turns": e.total_turns}))
        on(A2AConnectionErrorEvent)(lambda _s, e: self.errors.append(
            {"error": e.error, "type": e.error_type, "http_status": e.status_code, "operation": e.operation}))
        on(A2AAuthenticationFailedEvent)(lambda _s, e: self.errors.append(
            {"error": e.error, "type": "authentication", "http_status": e.status_code, "operation": "card"}))


def parser():
    p = argparse.ArgumentParser(description="Outside-client matrix: CrewAI A2A delegation.")
    p.add_argument("url", help="the provider's A2A URL: the bare URL of its own host on the hub")
    p.add_argument("token", help="the caller's bearer token (BearerTokenAuth)")
    sub = p.add_subparsers(dest="op", required=True)
    text = sub.add_parser("send-text")
    text.add_argument("text")
    text.add_argument("--model-url", required=True, help="the stand-in model's OpenAI-compatible base URL")
    text.add_argument("--trust-remote-completion", action="store_true")
    text.add_argument("--timeout", type=int, default=60, help="A2AClientConfig timeout, seconds")
    return p


def run(args, seen):
    llm = LLM(model="openai/standin", base_url=args.model_url, api_key="standin")
    agent = Agent(
        role="Ticket coordinator",
        goal="Get support tickets classified by the helpdesk",
        backstory="You route support tickets to the agents that classify them.",
        llm=llm,
        a2a=A2AClientConfig(
            endpoint=args.url,
            auth=BearerTokenAuth(token=args.token),
            timeout=args.timeout,
            trust_remote_completion_status=args.trust_remote_completion,
        ),
    )
    task = Task(
        description=f"Have this support ticket classified. Ticket: {args.text}",
        expected_output="The ticket's category",
        agent=agent,
    )
    result = Crew(agents=[agent], tasks=[task]).kickoff()
    crewai_event_bus.flush()
    if not seen.cards:
        raise RuntimeError(f"CrewAI fetched no agent card: {seen.errors or result.raw}")
    response = seen.responses[-1] if seen.responses else None
    failed = [c for c in seen.completed if c["status"] == "failed"]
    if response is None or response["state"] != "completed":
        message = (response or {}).get("text") or (failed[-1]["error"] if failed else None)
        if message is None:
            raise RuntimeError(f"CrewAI received no answer: {seen.errors or result.raw}")
        # No code, reason or HTTP status: CrewAI keeps the failure as text
        # only (and the status a2a-sdk puts in it, e.g. 400 for a response
        # that is not an event stream, is not the server's).
        out = a2a_error(None, message, None, None)
        out["error"]["result"] = result.raw
        return out
    return {
        "answer": {
            "data": None,
            "text": response["text"],
            "state": response["state"],
            "result": result.raw,
            "card": seen.cards[-1],
            "transport": seen.transports[-1] if seen.transports else None,
            "conversation": seen.completed[-1] if seen.completed else None,
        }
    }


def main(argv):
    args = parser().parse_args(argv)
    seen = Seen()
    try:
        out, rc = run(args, seen), 0
    except Exception as e:  # noqa: BLE001  (no answer at all: exit 3)
        out, rc = no_answer_a2a(f"{type(e).__name__}: {e}"), 3
    sys.stdout = STDOUT
    rc = emit(PROG, out, rc)
    STDOUT.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
