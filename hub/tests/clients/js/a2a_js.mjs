// An A2A client this project did not write, the official JavaScript SDK
// (@a2a-js/sdk 1.3.0, from npm), joining the hub the way its README shows.
//
//   node a2a_js.mjs URL TOKEN card
//   node a2a_js.mjs URL TOKEN send-data JSON [--skill ID]
//   node a2a_js.mjs URL TOKEN send-text TEXT [--skill ID]
//   options: --timeout S (the whole run, card fetch included; default 60)
//            --trace (every HTTP exchange on stderr: method, URL, status)
//
// URL is the agent's base URL as given (e.g. {hub}/a2a/{provider}, with or
// without a trailing slash: it is not touched). The SDK's DEFAULT card
// resolver (AgentCardResolver.default, used by ClientFactory.createFromUrl)
// fetches the card from `new URL('.well-known/agent-card.json', URL)`, with
// no credential: a WHATWG relative reference, so `.../a2a/vendorcorp` gives
// `.../a2a/.well-known/agent-card.json` and `.../a2a/vendorcorp/` gives
// `.../a2a/vendorcorp/.well-known/agent-card.json`. The token is added only
// the way the README documents for authentication: an AuthenticationHandler
// through createAuthenticatingFetchWithRetry, as the `fetchImpl` of the
// JSON-RPC and HTTP+JSON transport factories (ClientFactoryOptions.createFrom
// the defaults), so it goes on the calls and never on the card fetch. Its
// handler never retries (shouldRetryWithHeaders answers undefined): a retry
// would be a second call to the hub. TOKEN "" sends no Authorization header.
// The transport is the SDK's pick from the card's supportedInterfaces; the
// SDK sends A2A-Version: 1.0 on the card fetch and on every call.
//
// Output (exactly one JSON object on stdout):
//   card       {"name", "skills": [ids], "interfaces": [{"url", "binding",
//               "version"}], "extended_card": capabilities.extendedAgentCard
//               or null}: the public card as the default resolver got it
//   send-data  {"answer": {"kind": "message"|"task", "data", "text", "state",
//               "metadata"}}
//   send-text  data/text: the first data part and the first text part of the
//              answer (null when absent), for a task from its artifacts, else
//              from status.message; state: the task's state spelled as in v0.3
//              (completed, input-required, ...), null for a message;
//              metadata: the answer's (where the hub's receipt is), or null.
//              `--skill ID` puts {"skill": ID} in the message metadata.
//   an error answer (a JSON-RPC error, an HTTP+JSON google.rpc.Status, or
//   an HTTP error status):
//     {"error": {"code", "message", "reason", "http_status"}}
//   code: the error's code on the wire (JSON-RPC error.code; for HTTP+JSON
//   the Status code), else the HTTP status; reason: the `reason` of the
//   first type.googleapis.com/google.rpc.ErrorInfo in the error's `data`
//   (HTTP+JSON: `details`). The SDK keeps a JSON-RPC error's `data`
//   (JsonRpcTransportError.data) but not the HTTP status, and its HTTP+JSON
//   errors keep no details: both are read from the raw answer of the same
//   exchange, through a capturing fetch that is the transports' fetchImpl
//   (under the auth wrapper). Never a second request.
//
// Exit codes: 0 for any answer from the agent, success or error; 2 for a
// usage error; 3 when no answer could be had: connection refused, timeout,
// a card that could not be read (an HTTP error, not JSON, not a card), no
// transport of the SDK's on the card, or an answer that is not A2A. Then
// {"error": {"code": null, "message", "reason": null, "http_status"}} is
// printed and the cause goes to stderr.

import { Role, TaskState } from '@a2a-js/sdk';
import {
  AgentCardResolver,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';

import { Capture, NoAnswer, UsageError, parseCli, parseJson, reasonOf, run, timeoutMs, transportFailure } from './common.mjs';

const NAME = 'a2a_js';
const USAGE = `usage:
  node a2a_js.mjs URL TOKEN card
  node a2a_js.mjs URL TOKEN send-data JSON [--skill ID]
  node a2a_js.mjs URL TOKEN send-text TEXT [--skill ID]
  options: --timeout S (default 60), --trace
`;

function parse(argv) {
  const { values, positionals } = parseCli(argv, {
    skill: { type: 'string' },
    timeout: { type: 'string', default: '60' },
    trace: { type: 'boolean', default: false },
  });
  const [url, token, op, arg, ...rest] = positionals;
  if (url === undefined || token === undefined || op === undefined) throw new UsageError('URL, TOKEN and OP are required');
  try {
    new URL(url);
  } catch {
    throw new UsageError(`not a URL: ${url}`);
  }
  const arity = { card: 0, 'send-data': 1, 'send-text': 1 }[op];
  if (arity === undefined) throw new UsageError(`unknown OP ${op}`);
  const given = (arg === undefined ? 0 : 1) + rest.length;
  if (given !== arity) throw new UsageError(`${op} takes ${arity} argument(s), got ${given}`);
  if (op === 'card' && values.skill !== undefined) throw new UsageError('--skill goes with send-data or send-text');
  const data = op === 'send-data' ? parseJson(arg, 'send-data JSON') : undefined;
  return { url, token, op, arg, data, skill: values.skill, timeoutMs: timeoutMs(values.timeout), trace: values.trace };
}

/** TASK_STATE_INPUT_REQUIRED -> input-required (the v0.3 spelling the Python clients print). */
function stateName(state) {
  const name = (TaskState[state] ?? 'TASK_STATE_UNSPECIFIED').replace(/^TASK_STATE_/, '');
  return name === 'UNSPECIFIED' || name === 'UNRECOGNIZED' ? 'unknown' : name.toLowerCase().replaceAll('_', '-');
}

/** First data part and first text part across lists of parts. */
function firstParts(partLists) {
  let data = null;
  let text = null;
  for (const parts of partLists) {
    for (const part of parts ?? []) {
      if (data === null && part.content?.$case === 'data') data = part.content.value ?? null;
      if (text === null && part.content?.$case === 'text') text = part.content.value;
    }
  }
  return { data, text };
}

function message(ctx) {
  const content = ctx.op === 'send-data' ? { $case: 'data', value: ctx.data } : { $case: 'text', value: ctx.arg };
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content, metadata: undefined, filename: '', mediaType: '' }],
    metadata: ctx.skill !== undefined ? { skill: ctx.skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function answer(result) {
  if ('messageId' in result) {
    return { answer: { kind: 'message', ...firstParts([result.parts]), state: null, metadata: result.metadata ?? null } };
  }
  const fromArtifacts = firstParts((result.artifacts ?? []).map((a) => a.parts));
  const fromStatus = firstParts([result.status?.message?.parts]);
  return {
    answer: {
      kind: 'task',
      data: fromArtifacts.data ?? fromStatus.data,
      text: fromArtifacts.text ?? fromStatus.text,
      state: stateName(result.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
      metadata: result.metadata ?? null,
    },
  };
}

function noAnswer(message, httpStatus) {
  return { error: { code: null, message, reason: null, http_status: httpStatus ?? null } };
}

/** The card, by the SDK's default resolver (no credential); NoAnswer when it cannot be read. */
async function resolveCard(ctx, resolve) {
  try {
    return await resolve();
  } catch (e) {
    if (e instanceof NoAnswer) throw e;
    if (transportFailure(e)) throw new NoAnswer(`no answer to the card fetch from ${ctx.url}`, { cause: e });
    const status = /: (\d{3})$/.exec(e.message);
    throw new NoAnswer(`the agent card could not be read: ${e.message}`, { cause: e, httpStatus: status ? Number(status[1]) : null });
  }
}

async function main(ctx) {
  if (ctx.op === 'card') {
    // The resolver ClientFactory.createFromUrl uses, on its own: the card as fetched, no client built.
    const card = await resolveCard(ctx, () => AgentCardResolver.default.resolve(ctx.url));
    return {
      name: card.name,
      skills: (card.skills ?? []).map((s) => s.id),
      interfaces: (card.supportedInterfaces ?? []).map((i) => ({ url: i.url, binding: i.protocolBinding, version: i.protocolVersion })),
      extended_card: card.capabilities?.extendedAgentCard ?? null,
    };
  }

  const capture = new Capture();
  const fetchImpl = ctx.token
    ? createAuthenticatingFetchWithRetry(capture.fetch, {
        headers: async () => ({ Authorization: `Bearer ${ctx.token}` }),
        shouldRetryWithHeaders: async () => undefined,
      })
    : capture.fetch;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    }),
  );
  const client = await resolveCard(ctx, async () => {
    try {
      return await factory.createFromUrl(ctx.url);
    } catch (e) {
      if (/^No compatible transport found/.test(e.message)) throw new NoAnswer(`the agent card offers no transport of the SDK's: ${e.message}`);
      throw e;
    }
  });

  try {
    return answer(await client.sendMessage({ message: message(ctx) }, { signal: AbortSignal.timeout(ctx.timeoutMs) }));
  } catch (e) {
    if (transportFailure(e)) throw new NoAnswer('no answer to the call', { cause: e });
    const raw = capture.error;
    const parsedBySdk = e.envelopeCode !== undefined || e.transport !== undefined;
    if (raw || parsedBySdk || (capture.status ?? 0) >= 400) {
      const code = Number.isInteger(raw?.code) ? raw.code : Number.isInteger(e.envelopeCode) ? e.envelopeCode : capture.status;
      const details = raw ? (raw.data ?? raw.details) : e.data;
      if (code === null || code === undefined) throw new NoAnswer(`an answer that is not A2A: ${e.message}`, { cause: e });
      return {
        error: {
          code,
          message: typeof raw?.message === 'string' ? raw.message : e.message,
          reason: reasonOf(details),
          http_status: capture.status,
        },
      };
    }
    throw new NoAnswer(`an answer that is not A2A: ${e.message}`, { cause: e, httpStatus: capture.status });
  }
}

run(NAME, USAGE, { parse, run: main }, noAnswer);
