"""What the clients on the official Python a2a-sdk 1.3 read out of the SDK's
objects, in one place (a2a_hub_client.py, matrix/a2a_sdk.py and
matrix/maf_a2a.py run in .tools/venv with that SDK): a task state as v0.3
spells it, the first data and text parts of an answer, a card's summary,
and the caller's token as the SDK's credential service.
"""

from google.protobuf import json_format

from a2a.client import CredentialService
from a2a.types import TaskState


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
