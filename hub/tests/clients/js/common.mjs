// What both Node test clients (a2a_js.mjs on @a2a-js/sdk, mcp_ts.mjs on
// @modelcontextprotocol/sdk) share: the CLI contract (one JSON object on
// stdout; exit 0 for any answer from the server, 2 for a usage error, 3 when
// no answer could be had, the cause on stderr), a fetch wrapper that keeps
// the last response's status and JSON body (given to each SDK as its own
// documented fetch implementation, so that error details the SDK drops can
// be read from the very exchange the SDK made: never a second request), and
// the first google.rpc.ErrorInfo of an error's details. No SDK import here.

import dc from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';

export const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** Usage error: the script's usage text on stderr, exit 2. */
export class UsageError extends Error {}

/** No answer from the server (exit 3); `httpStatus` when one came that is not the protocol's. */
export class NoAnswer extends Error {
  constructor(message, { cause, httpStatus = null } = {}) {
    super(message, { cause });
    this.httpStatus = httpStatus;
  }
}

/**
 * parseArgs for `SCRIPT URL TOKEN OP [ARGS]`: strict options, positionals.
 * Throws UsageError.
 */
export function parseCli(argv, options) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e.message);
  }
}

/** Seconds from --timeout (a positive number), in ms. */
export function timeoutMs(value) {
  const s = Number(value);
  if (!Number.isFinite(s) || s <= 0) throw new UsageError(`--timeout must be a positive number of seconds, not ${value}`);
  return Math.round(s * 1000);
}

export function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} is not JSON: ${e.message}`);
  }
}

/**
 * A fetch wrapper that keeps the status and JSON body of the last response
 * (the body read from a clone, so the SDK reads the original untouched;
 * event streams are not read). It changes nothing in the request.
 */
export class Capture {
  constructor(base = globalThis.fetch) {
    this.status = null;
    this.body = null;
    this.fetch = async (input, init) => {
      this.status = null;
      this.body = null;
      const response = await base(input, init);
      this.status = response.status;
      const type = response.headers.get('content-type') || '';
      if (/json/i.test(type)) {
        try {
          this.body = await response.clone().json();
        } catch {
          this.body = null;
        }
      }
      return response;
    };
  }

  /** The JSON-RPC `error` object (or google.rpc.Status) of the last body, or null. */
  get error() {
    const err = this.body && typeof this.body === 'object' ? this.body.error : null;
    return err && typeof err === 'object' ? err : null;
  }
}

/**
 * Every HTTP exchange this process makes, seen through undici's diagnostics
 * channels (Node's fetch): method, URL, status. Observation only: nothing is
 * changed, and no header (no token) is kept. `--trace` prints them on stderr.
 */
export class Exchanges {
  constructor() {
    this.list = [];
    const byRequest = new WeakMap();
    dc.subscribe('undici:request:create', ({ request }) => {
      const entry = { method: request.method, url: request.origin + request.path, status: null };
      byRequest.set(request, entry);
      this.list.push(entry);
    });
    dc.subscribe('undici:request:headers', ({ request, response }) => {
      const entry = byRequest.get(request);
      if (entry) entry.status = response.statusCode;
    });
  }

  print(prefix) {
    for (const e of this.list) process.stderr.write(`${prefix}: ${e.method} ${e.url} -> ${e.status ?? 'no answer'}\n`);
  }
}

/** The first google.rpc.ErrorInfo in a list of details, or {}. */
export function errorInfo(details) {
  for (const d of Array.isArray(details) ? details : []) {
    if (d && typeof d === 'object' && d['@type'] === ERROR_INFO) return d;
  }
  return {};
}

/** `reason` from an error's data: a list holding an ErrorInfo, or an object with a `reason`. */
export function reasonOf(data) {
  if (Array.isArray(data)) return errorInfo(data).reason ?? null;
  if (data && typeof data === 'object' && typeof data.reason === 'string') return data.reason;
  return null;
}

/** The chain of causes of an error, as one line (fetch's "fetch failed" hides the useful part). */
export function causeChain(e) {
  const parts = [];
  for (let c = e; c && parts.length < 6; c = c.cause) {
    const code = c.code && typeof c.code === 'string' ? ` (${c.code})` : '';
    parts.push(`${c.message || String(c)}${code}`);
    if (Array.isArray(c.errors)) parts.push(...c.errors.map((x) => `${x.message}${x.code ? ` (${x.code})` : ''}`));
  }
  return parts.join(': ');
}

/** True when the error is fetch's own: no HTTP answer (refused, reset, DNS) or an abort. */
export function transportFailure(e) {
  for (let c = e; c; c = c.cause) {
    if (c.name === 'AbortError' || c.name === 'TimeoutError') return true;
    if (c instanceof TypeError && c.message === 'fetch failed') return true;
  }
  return false;
}

/** Prints the one JSON object and exits with rc; for rc 3 the cause on stderr. */
export function finish(name, out, rc, cause) {
  process.stdout.write(JSON.stringify(out) + '\n');
  if (rc === 3) process.stderr.write(`${name}: ${cause ?? out.error?.message}\n`);
  process.exit(rc);
}

/**
 * Runs main(): usage errors exit 2, NoAnswer exits 3, the whole run is
 * bounded by timeout (the card fetch included: exit 3). noAnswer(message,
 * httpStatus) builds the script's error object for exit 3. Anything else
 * is a bug and keeps its stack trace (exit 1).
 */
export async function run(name, usage, main, noAnswer) {
  let ctx;
  try {
    ctx = main.parse(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${name}: ${e.message}\n${usage}`);
      process.exit(2);
    }
    throw e;
  }
  const exchanges = new Exchanges();
  const trace = () => ctx.trace && exchanges.print(name);
  const timer = setTimeout(() => {
    trace();
    finish(name, noAnswer(`no answer within ${ctx.timeoutMs / 1000} s`, null), 3);
  }, ctx.timeoutMs);
  let out;
  try {
    out = await main.run(ctx);
  } catch (e) {
    if (!(e instanceof NoAnswer)) throw e;
    clearTimeout(timer);
    trace();
    finish(name, noAnswer(e.message, e.httpStatus), 3, e.cause && !e.message.includes(causeChain(e.cause)) ? `${e.message} (${causeChain(e.cause)})` : e.message);
  }
  clearTimeout(timer);
  trace();
  finish(name, out, 0);
}
