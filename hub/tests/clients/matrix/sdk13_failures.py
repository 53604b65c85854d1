"""What a failed call of a matrix client on a2a-sdk 1.3 prints (a2a_sdk.py,
maf_a2a.py): the one JSON object and the exit code of matrix_common's
contract, from the exception the SDK (or MAF around it) raised and the raw
answer the Capture kept.
"""

import httpx
from google.protobuf import json_format

from a2a.client.errors import AgentCardResolutionError
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

from matrix_common import NoAnswer, no_answer_a2a, raw_error, transport_failure


def failure_output(exc, capture, wrapped=False):
    """(output, exit code) for `exc`. `wrapped`: the library wraps the
    SDK's errors in its own (MAF), so any exception may be an answer."""
    if isinstance(exc, NoAnswer):
        return no_answer_a2a(str(exc)), 3
    if isinstance(exc, AgentCardResolutionError):
        if exc.status_code is not None:  # the hub answered the card fetch with an error status
            return raw_error(capture, exc.status_code, str(exc)), 0
        return no_answer_a2a(f"card unreadable: {exc}"), 3  # refused, timed out, not a card
    if isinstance(exc, json_format.ParseError):
        return no_answer_a2a(f"an answer that is not A2A: {exc}"), 3
    if isinstance(exc, A2AError):
        code = JSON_RPC_ERROR_CODE_MAP.get(type(exc))
        message = getattr(exc, "message", None) or str(exc)
    elif wrapped:
        code, message = None, f"{type(exc).__name__}: {exc}"
    else:
        raise exc
    answered = raw_error(capture, code, message)
    if transport_failure(exc, httpx.RequestError) or answered is None:
        return no_answer_a2a(f"{type(exc).__name__}: {exc}"), 3
    return answered, 0
