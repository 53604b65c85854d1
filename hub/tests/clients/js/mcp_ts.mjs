// An MCP client this project did not write, the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2, from npm), joining the hub's MCP front
// `{hub}/mcp/{provider}` the way its README and docs/client.md show: a
// `Client` connected over `StreamableHTTPClientTransport(new URL(URL),
// { requestInit: { headers: { Authorization: 'Bearer TOKEN' } } })` (no
// header when TOKEN is ""), which initializes the session and negotiates
// the protocol version.
//
//   node mcp_ts.mjs URL TOKEN tools
//   node mcp_ts.mjs URL TOKEN call TOOL JSON
//   options: --timeout S (the whole run; default 60)
//            --trace (every HTTP exchange on stderr: method, URL, status)
//
// Output (exactly one JSON object on stdout):
//   tools  {"tools": [names], "protocol_version"}
//   call   {"result": {"is_error", "structured", "text"}, "protocol_version"}
//          structured: the result's structuredContent or null; text: its
//          text content items joined with a space, or null when none
//   an error answer (a JSON-RPC error, or an HTTP error status):
//          {"error": {"code", "message", "reason"}, "protocol_version"}
//          code: the JSON-RPC error.code, else the HTTP status; reason: the
//          error data's `reason` (data an object with `reason`, or a list
//          holding a google.rpc.ErrorInfo), else null.
//   protocol_version: the version the SDK negotiated at initialize (the one
//   it sends as MCP-Protocol-Version), null before that.
// The SDK keeps a JSON-RPC error's data (McpError.data); for an HTTP error
// status it keeps only the status and the body as text in its message, so
// the body is read from the raw answer of the same exchange: a capturing
// fetch given as the transport's documented `fetch` option (it changes
// nothing in the request). Never a second request.
//
// Exit codes: 0 for any answer from the server, success or error; 2 for a
// usage error; 3 when no answer could be had (connection refused, timeout,
// an answer that is not MCP): {"error": {"code": null, "message",
// "reason": null}} and the cause on stderr.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

import { Capture, NoAnswer, UsageError, parseCli, parseJson, reasonOf, run, timeoutMs, transportFailure } from './common.mjs';

const NAME = 'mcp_ts';
const USAGE = `usage:
  node mcp_ts.mjs URL TOKEN tools
  node mcp_ts.mjs URL TOKEN call TOOL JSON
  options: --timeout S (default 60), --trace
`;

function parse(argv) {
  const { values, positionals } = parseCli(argv, {
    timeout: { type: 'string', default: '60' },
    trace: { type: 'boolean', default: false },
  });
  const [url, token, op, ...args] = positionals;
  if (url === undefined || token === undefined || op === undefined) throw new UsageError('URL, TOKEN and OP are required');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`not a URL: ${url}`);
  }
  const arity = { tools: 0, call: 2 }[op];
  if (arity === undefined) throw new UsageError(`unknown OP ${op}`);
  if (args.length !== arity) throw new UsageError(`${op} takes ${arity} argument(s), got ${args.length}`);
  const ctx = { url, token, op, timeoutMs: timeoutMs(values.timeout), trace: values.trace };
  if (op === 'call') {
    ctx.tool = args[0];
    ctx.arguments = parseJson(args[1], 'call JSON');
    if (!ctx.arguments || typeof ctx.arguments !== 'object' || Array.isArray(ctx.arguments)) {
      throw new UsageError('call JSON must be an object (the tool arguments)');
    }
  }
  return ctx;
}

function noAnswer(message) {
  return { error: { code: null, message, reason: null } };
}

/** The error object for an error the server answered, or NoAnswer when it did not answer. */
function errorAnswer(e, capture, protocolVersion) {
  if (transportFailure(e)) throw new NoAnswer('no answer from the server', { cause: e });
  if (e instanceof McpError && !(e.code === ErrorCode.ConnectionClosed || e.code === ErrorCode.RequestTimeout)) {
    // A JSON-RPC error answer, parsed by the SDK (data kept).
    return { error: { code: e.code, message: e.message.replace(/^MCP error -?\d+: /, ''), reason: reasonOf(e.data) }, protocol_version: protocolVersion };
  }
  if (e instanceof StreamableHTTPError && e.code >= 400) {
    const raw = capture.error;
    return {
      error: {
        code: Number.isInteger(raw?.code) ? raw.code : e.code,
        message: typeof raw?.message === 'string' ? raw.message : e.message,
        reason: reasonOf(raw?.data),
      },
      protocol_version: protocolVersion,
    };
  }
  throw new NoAnswer(`an answer that is not MCP: ${e.message}`, { cause: e, httpStatus: capture.status });
}

async function main(ctx) {
  const capture = new Capture();
  const client = new Client({ name: 'wall-street-mcp-ts', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(ctx.url), {
    requestInit: ctx.token ? { headers: { Authorization: `Bearer ${ctx.token}` } } : undefined,
    fetch: capture.fetch,
  });
  // Longer than the whole run's bound: that one answers first (exit 3).
  const options = { timeout: ctx.timeoutMs + 1000 };
  try {
    await client.connect(transport, options);
    const protocolVersion = transport.protocolVersion ?? null;
    if (ctx.op === 'tools') {
      const { tools } = await client.listTools(undefined, options);
      return { tools: tools.map((t) => t.name), protocol_version: protocolVersion };
    }
    const result = await client.callTool({ name: ctx.tool, arguments: ctx.arguments }, undefined, options);
    const texts = (result.content ?? []).filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text);
    return {
      result: {
        is_error: Boolean(result.isError),
        structured: result.structuredContent ?? null,
        text: texts.length ? texts.join(' ') : null,
      },
      protocol_version: protocolVersion,
    };
  } catch (e) {
    return errorAnswer(e, capture, transport.protocolVersion ?? null);
  } finally {
    await client.close().catch(() => {});
  }
}

run(NAME, USAGE, { parse, run: main }, noAnswer);
