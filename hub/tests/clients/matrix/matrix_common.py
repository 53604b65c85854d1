"""What every outside-client script of the matrix shares: the command line
contract, the one JSON object on stdout, the exit codes, and the raw-answer
capture of ../hub_answer.py. No SDK import here: each script runs in the venv
of its own library (scripts/setup test installs them):

  a2a_sdk.py         a2a-sdk 1.3.0                  .tools/venv      (requirements-a2a.txt)
  a2a_sdk03.py       a2a-sdk 0.3.26                 .tools/venv03    (requirements-a2a03.txt)
  maf_a2a.py         agent-framework-a2a 1.0.0b261022 .tools/venv    (+ requirements-maf.txt)
  fastmcp_client.py  fastmcp 4.2.3 (mcp 2.3.0)      .tools/venv-mcp  (+ requirements-fastmcp.txt)
  mcp_sdk.py         mcp 2.3.0                      .tools/venv-mcp  (requirements-mcp.txt)
  crewai_a2a.py      crewai[a2a] 1.15.30 (a2a-sdk 0.3.26) .tools/venv-crewai (requirements-crewai.txt)

The two clients on a2a-sdk 1.3 share what they read of the SDK's objects
(../sdk13.py) and how its failures print (sdk13_failures.py).

Each joins the hub the way its library's own README/docs show, with no shim
and no hand-made discovery; see each script's docstring.

Contract (every script):
  python SCRIPT URL TOKEN OP [ARGS]
  stdout: exactly one JSON object; exit 0 for any answer from the server
  (success or error), 3 when no answer could be had at all (connection
  refused, card unreadable, client-side timeout, an answer that is not the
  protocol), with {"error": {..., "code": null}} and the cause on stderr;
  2 for a usage error (argparse).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hub_answer import ERROR_INFO, Capture, NoAnswer, error_info  # noqa: E402,F401  (../hub_answer.py)


def a2a_parser(description, transports=None, extra=None):
    """URL TOKEN (card | send-data JSON | send-text TEXT) [--skill ID] [--transport T] [--timeout S];
    extra(parser) adds a script's own options to every op."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("url", help="the provider's A2A URL: {hub}/a2a/{provider}")
    p.add_argument("token", help='the caller\'s bearer token, sent on calls only (never on the card fetch); "" for none')
    common = argparse.ArgumentParser(add_help=False)
    if transports:
        common.add_argument("--transport", choices=transports, default=transports[0])
    common.add_argument("--timeout", type=float, default=60.0, help="client-side timeout, seconds")
    if extra:
        extra(common)
    sub = p.add_subparsers(dest="op", required=True)
    sub.add_parser("card", parents=[common])
    data = sub.add_parser("send-data", parents=[common])
    data.add_argument("json", help="JSON object for a structured (data) part")
    data.add_argument("--skill", help='puts {"skill": ID} in the message metadata')
    text = sub.add_parser("send-text", parents=[common])
    text.add_argument("text")
    text.add_argument("--skill", help='puts {"skill": ID} in the message metadata')
    return p


def mcp_parser(description, protocols=None, extra=None):
    """URL TOKEN (tools | call TOOL JSON) [--protocol P] [--timeout S]."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("url", help="the hub's MCP front: {hub}/mcp/{provider}")
    p.add_argument("token", help='the caller\'s bearer token; "" for none')
    common = argparse.ArgumentParser(add_help=False)
    if protocols:
        common.add_argument("--protocol", choices=protocols, default=protocols[0])
    common.add_argument("--timeout", type=float, default=30.0, help="client-side timeout, seconds")
    if extra:
        extra(common)
    sub = p.add_subparsers(dest="op", required=True)
    sub.add_parser("tools", parents=[common])
    call = sub.add_parser("call", parents=[common])
    call.add_argument("tool")
    call.add_argument("json", help="the tool's arguments, a JSON object")
    return p


def parse(parser, argv):
    args = parser.parse_args(argv)
    if getattr(args, "json", None) is not None:
        try:
            value = json.loads(args.json)
        except ValueError as e:
            parser.error(f"not JSON: {e}")
        if not isinstance(value, dict):
            parser.error("the JSON argument must be an object")
        args.value = value
    return args


def a2a_error(code, message, reason, http_status):
    return {"error": {"code": code, "message": message, "reason": reason, "http_status": http_status}}


def mcp_error(code, message, reason):
    return {"error": {"code": code, "message": message, "reason": reason}}


def raw_error(capture, fallback_code=None, fallback_message=None):
    """The error object read from the raw body of the last response (the
    JSON-RPC `error`, or HTTP+JSON's google.rpc.Status `error`), the ErrorInfo
    reason from its `data` list (`details` for HTTP+JSON). None when the last
    response carried no error at all."""
    body = capture.body if isinstance(capture.body, dict) else {}
    err = body.get("error")
    if isinstance(err, dict):
        code = err.get("code") if isinstance(err.get("code"), int) else fallback_code
        info = error_info(err.get("data", err.get("details")))
        return a2a_error(
            code if code is not None else capture.status,
            err.get("message") or fallback_message,
            info.get("reason"),
            capture.status,
        )
    if (capture.status or 0) >= 400:
        return a2a_error(fallback_code if fallback_code is not None else capture.status, fallback_message or f"HTTP {capture.status}", None, capture.status)
    return None


def transport_failure(exc, request_error_types):
    """True when exc (or one of its causes) is an HTTP library's "no answer" error."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, request_error_types):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def leaf(exc):
    """The first non-group exception inside (nested) exception groups (anyio task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def emit(prog, out, rc=0):
    """Print the one JSON object; on exit 3 the cause on stderr."""
    print(json.dumps(out))
    if rc:
        print(f"{prog}: {out['error']['message']}", file=sys.stderr)
    return rc


def no_answer_a2a(message):
    return a2a_error(None, message, None, None)


def no_answer_mcp(message):
    return mcp_error(None, message, None)
