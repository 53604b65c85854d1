"""The official Python a2a-sdk 1.3 (.tools/venv) registering a webhook for a
long task through the hub, the way the SDK's client offers it: the card by
the default resolver (no credential), a client from `ClientFactory` with the
SDK's `AuthInterceptor` for the scheme the card declares, a task started
with `return_immediately`, then `create_task_push_notification_config` for
it with the receiver's URL and the receiver's own token.

usage: python push_register.py URL TOKEN WEBHOOK RECEIVER_TOKEN JSON
  URL      the provider's A2A URL at the hub ({hub}/a2a/{provider}/)
  JSON     the data part: {"capability", "input"}
prints one JSON object: {"task_id", "state", "config"} (the configuration as
the hub answered it), or {"error": {...}} when a call was refused.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import A2ACardResolver, AuthInterceptor, ClientConfig, ClientFactory
from a2a.types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

from sdk13 import Token, state_name


async def main(url, token, webhook, receiver_token, data):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(httpx_client=http, base_url=url).get_agent_card()
        config = ClientConfig(streaming=False, httpx_client=http)
        client = ClientFactory(config).create(card, interceptors=[AuthInterceptor(Token(token))])
        value = struct_pb2.Value()
        json_format.ParseDict(json.loads(data), value)
        message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(data=value)])
        request = SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        try:
            events = [e async for e in client.send_message(request)]
            task = events[-1].task
            created = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url=webhook, token=receiver_token)
            )
        except Exception as e:  # noqa: BLE001  (printed: the test reads it)
            return {"error": {"type": type(e).__name__, "message": str(e)}}
        finally:
            await client.close()
        return {
            "task_id": task.id,
            "state": state_name(task.status.state),
            "config": json_format.MessageToDict(created),
        }


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    print(json.dumps(asyncio.run(main(*sys.argv[1:]))))
