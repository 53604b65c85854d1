"""The official Python a2a-sdk 1.3 (.tools/venv) asking for a result it
accepts, through the hub, with the messages A2A's experimental acceptance
extension (a2aproject/A2A#1976) defines and nothing of Wall Street's: the
card by the default resolver, a client from `ClientFactory` with the SDK's
`AuthInterceptor`; a task submitted with `{EXT}/criteria` in the message's
metadata; its first result rejected with feedback by a message on the task
whose metadata carries `{EXT}/decision`; the second result accepted.

usage: python accept_result.py URL TOKEN JSON
  URL      the provider's A2A URL at the hub ({hub}/a2a/{provider}/)
  JSON     the data part: {"capability", "input"}
prints one JSON object: the state, pending flag and attempt after each
step, or {"error": {...}} when a call was refused.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import A2ACardResolver, AuthInterceptor, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest

from sdk13 import Token, state_name

EXT = "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1"


def struct(d):
    s = struct_pb2.Struct()
    json_format.ParseDict(d, s)
    return s


def seen(task):
    meta = json_format.MessageToDict(task.status.message.metadata) if task.status.HasField("message") else {}
    return {
        "state": state_name(task.status.state),
        "pending": meta.get(EXT + "/pendingAcceptance", False),
        "attempt": meta.get(EXT + "/attempt"),
        "artifacts": len(task.artifacts),
    }


async def main(url, token, data):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(httpx_client=http, base_url=url).get_agent_card()
        declared = [e.uri for e in card.capabilities.extensions]
        config = ClientConfig(streaming=False, httpx_client=http)
        client = ClientFactory(config).create(card, interceptors=[AuthInterceptor(Token(token))])

        async def send(message):
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
            return events[-1].task

        value = struct_pb2.Value()
        json_format.ParseDict(json.loads(data), value)
        steps = []
        try:
            submitted = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=[Part(data=value)],
                metadata=struct({EXT + "/criteria": {"description": "a queue and a priority", "maxRejections": 2}}),
                extensions=[EXT],
            )
            task = await send(submitted)
            steps.append(seen(task))
            reject = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                task_id=task.id,
                parts=[Part(text="The priority should follow the customer's tier.")],
                metadata=struct({EXT + "/decision": {"action": "reject", "reason": "QUALITY_THRESHOLD_NOT_MET"}}),
                extensions=[EXT],
            )
            task = await send(reject)
            steps.append(seen(task))
            accept = Message(
                role=Role.ROLE_USER,
                message_id=str(uuid.uuid4()),
                task_id=task.id,
                parts=[Part(text="Approved.")],
                metadata=struct({EXT + "/decision": {"action": "accept"}}),
                extensions=[EXT],
            )
            task = await send(accept)
            steps.append(seen(task))
        except Exception as e:  # noqa: BLE001  (printed: the test reads it)
            return {"error": {"type": type(e).__name__, "message": str(e)}, "steps": steps}
        finally:
            await client.close()
        return {"declared": EXT in declared, "task_id": task.id, "steps": steps}


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
