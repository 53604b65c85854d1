"""What the clients on the official Python a2a-sdk 1.3 read out of the SDK's
objects, in one place (a2a_hub_client.py, matrix/a2a_sdk.py,
matrix/a2a_grpc.py and matrix/maf_a2a.py run in .tools/venv with that SDK):
a task state as v0.3 spells it, the first data and text parts of an answer,
the matrix's answer of a message or a task, a card's summary, the matrix's
message from its command line, and the caller's token as the SDK's
credential service.
"""

import uuid

from google.protobuf import json_format, struct_pb2

from a2a.client import CredentialService
from a2a.types import Message, Part, Role, TaskState


class Token(CredentialService):
    """The caller's token for whatever scheme the card names (the SDK's
    extension point for AuthInterceptor)."""

    def __init__(self, token):
        self.token = token

    async def get_credentials(self, security_scheme_name, context):
        return self.token or None


def state_name(state):
    """TASK_STATE_INPUT_REQUIRED -> input-required (the v0.3 spelling)."""
    name = TaskState.Name(state).removeprefix("TASK_STATE_")
    return "unknown" if name == "UNSPECIFIED" else name.lower().replace("_", "-")


def first_parts(parts_lists):
    """First data part and first text part across lists of parts."""
    data = text = None
    for parts in parts_lists:
        for part in parts:
            if data is None and part.HasField("data"):
                data = json_format.MessageToDict(part.data)
            if text is None and part.HasField("text"):
                text = part.text
    return data, text


def card_summary(card):
    """{"name", "skills": [ids], "interfaces": [{"url", "binding", "version"}],
    "extended_card": capabilities.extendedAgentCard or null}."""
    caps = card.capabilities
    try:
        extended = caps.extended_agent_card if caps.HasField("extended_agent_card") else None
    except ValueError:  # not a presence-tracked field in this build
        extended = caps.extended_agent_card
    return {
        "name": card.name,
        "skills": [s.id for s in card.skills],
        "interfaces": [
            {"url": i.url, "binding": i.protocol_binding, "version": i.protocol_version or None}
            for i in card.supported_interfaces
        ],
        "extended_card": extended,
    }


def build_message(args):
    """The matrix's message: a text part (send-text) or a data part
    (send-data), `{"skill": ID}` in its metadata with --skill."""
    if args.op == "send-text":
        parts = [Part(text=args.text)]
    else:
        value = struct_pb2.Value()
        json_format.ParseDict(args.value, value)
        parts = [Part(data=value)]
    msg = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=parts)
    if args.skill:
        msg.metadata.update({"skill": args.skill})
    return msg


def message_answer(message):
    """{"kind": "message", "data", "text", "state": None, "metadata"} of a
    message (its metadata as the SDK read it: where the hub's receipt is)."""
    data, text = first_parts([message.parts])
    return {"kind": "message", "data": data, "text": text, "state": None,
            "metadata": json_format.MessageToDict(message.metadata)}


def task_answer(task):
    """{"kind": "task", "data", "text", "state", "metadata"} of a task: its
    artifacts' first parts, else its status message's."""
    data, text = first_parts([a.parts for a in task.artifacts])
    sdata, stext = first_parts([task.status.message.parts])
    return {
        "kind": "task",
        "data": data if data is not None else sdata,
        "text": text if text is not None else stext,
        "state": state_name(task.status.state),
        "metadata": json_format.MessageToDict(task.metadata),
    }
