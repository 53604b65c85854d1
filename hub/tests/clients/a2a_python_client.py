"""An A2A client this project did not write: the official Python a2a-sdk.

Fetches a peer's agent card through the SDK's resolver, then completes one
message exchange (non-streaming SendMessage over JSON-RPC) with a data part
naming a capability, and one with plain text. Prints one JSON object:
{"card_name", "skills", "data_answer", "text_answer"}. Exits non-zero on any
failure, with the SDK's own error.

usage: python a2a_python_client.py BASE_URL TOKEN CAPABILITY INPUT_JSON
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest


def message(parts):
    return Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)


def data_part(value):
    v = struct_pb2.Value()
    json_format.ParseDict(value, v)
    return Part(data=v)


async def exchange(client, msg):
    """Sends one message; returns the answer's parts as plain JSON."""
    answers = []
    async for event in client.send_message(SendMessageRequest(message=msg)):
        answers.append(json_format.MessageToDict(event))
    if not answers:
        raise SystemExit("the agent answered nothing")
    return answers[-1]


async def main(base_url, token, capability, input_json):
    http = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}, timeout=10
    )
    client = await create_client(
        base_url, ClientConfig(streaming=False, httpx_client=http)
    )
    card = client._card if hasattr(client, "_card") else None
    async with httpx.AsyncClient(timeout=10) as plain:
        raw_card = (await plain.get(f"{base_url}/.well-known/agent-card.json")).json()
    data_answer = await exchange(
        client, message([data_part({"capability": capability, "input": json.loads(input_json)})])
    )
    text_answer = await exchange(client, message([Part(text="What can you do?")]))
    await client.close()
    await http.aclose()
    print(
        json.dumps(
            {
                "card_name": card.name if card is not None else raw_card.get("name"),
                "skills": [s["id"] for s in raw_card.get("skills", [])],
                "data_answer": data_answer,
                "text_answer": text_answer,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
