/**
 * The one Node.js translation shared by the Node-based adapters: IncomingMessage → SentinelRequest, and
 * SentinelResponse → ServerResponse. It reads a body only when the core asks for it, with a cap, and accepts a
 * body a host parser already consumed (express.urlencoded, express.json, koa-bodyparser, @fastify/formbody).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { BodyTooLargeError, ClientAbortedError, type SentinelBody, type SentinelRequest, type SentinelResponse } from '../../src/index.js';

/** Body readers cap at this many bytes; the core applies its own (smaller) `bodyLimit` on top. */
const HARD_LIMIT = 1_048_576;

/** True when something upstream already consumed the request stream. */
function isConsumed(request: IncomingMessage & { _body?: unknown }): boolean {
  return request.readableEnded || request._body === true || request.readable === false;
}

/**
 * Reads a Node stream into one Buffer, refusing more than `limit` bytes. Fastify hands its payload stream here;
 * Express and Koa go through {@link lazyNodeBody}.
 * @example const bytes = await readNodeStream(request.raw, 16_384);
 * @throws BodyTooLargeError past `limit` (the core answers 413, RFC 9110 §15.5.14).
 */
export function readNodeStream(request: Readable, limit: number = HARD_LIMIT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop buffering; the 413 goes out with Connection: close so the rest is never read.
        request.pause();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // A stream error or a close before the end while reading a request body is the client going away
    // (ECONNRESET "aborted"): the client's doing, which the core must not report as a server failure.
    const onError = (error: Error): void => {
      cleanup();
      reject(new ClientAbortedError({ cause: error }));
    };
    const onClose = (): void => {
      cleanup();
      reject(new ClientAbortedError());
    };
    if (request.destroyed) {
      reject(new ClientAbortedError());
      return;
    }
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/**
 * The body of a request whose whole message the HTTP parser has already read, taken from the stream's buffer at
 * once; `undefined` when it has not all arrived (or someone else reads the stream). A small form usually comes in
 * the same packet as its headers, and by the time the core asks for it Node has parsed it: reading it through
 * stream events would cost four listeners, a promise and a deadline timer for bytes already in memory.
 */
function bufferedBody(request: Readable & { complete?: boolean }, limit: number): Buffer | undefined {
  if (request.complete !== true || request.readableFlowing !== null || request.destroyed) return undefined;
  if (request.readableLength > limit) throw new BodyTooLargeError(limit);
  // In paused mode one read() returns the whole buffer; the loop only guards that assumption.
  const chunks: Buffer[] = [];
  for (let chunk = request.read() as Buffer | null; chunk !== null; chunk = request.read() as Buffer | null) chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/**
 * The bytes of a request body stream: at once when the whole request has already arrived, otherwise read as they
 * come (see {@link readNodeStream}). The Fastify adapter reads its payload stream through this.
 * @example body: () => readNodeBody(request.raw, 16_384)
 * @throws BodyTooLargeError past `limit`.
 */
export function readNodeBody(stream: Readable, limit: number = HARD_LIMIT): Buffer | Promise<Buffer> {
  return bufferedBody(stream, limit) ?? readNodeStream(stream, limit);
}

/**
 * A lazy body: the host's parsed body when the stream was consumed upstream, the buffered bytes when the whole
 * request has arrived, otherwise the raw bytes read as they come. `parsed` is whatever the host put on the request
 * (`req.body`, `ctx.request.body`).
 */
export function lazyNodeBody(
  request: IncomingMessage,
  parsed: () => unknown,
  limit = HARD_LIMIT,
): () => SentinelBody | undefined | Promise<SentinelBody | undefined> {
  return () => {
    if (isConsumed(request)) {
      const body = parsed();
      if (body === undefined || body === null) return undefined;
      if (typeof body === 'string' || body instanceof Uint8Array) return body;
      return typeof body === 'object' ? (body as Record<string, unknown>) : String(body);
    }
    return readNodeBody(request, limit);
  };
}

// The scheme and authority of an absolute-form request target (`POST https://id.example/sentinel/… HTTP/1.1`): a
// host (a name or a bracketed IP literal) and a port of digits, nothing else (RFC 3986 §3.2.2; no userinfo, RFC 9110
// §4.2.4). Cut at the first `/`, `?` or `#` whatever came before, `http://a:b/sentinel/…` reached the service as
// `/sentinel/…` while the host's router (url.parse) read `/:b/sentinel/…`: a host rule in front of the service's
// paths was passed by. A target with any other authority is handed on as it is, which no route of the service matches.
const ABSOLUTE_FORM_ORIGIN = /^https?:\/\/(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::\d{0,5})?(?=[/?#]|$)/i;

/**
 * The origin form (path and query) of a request target. A server must accept the absolute form too (RFC 9112
 * §3.2.2), and Node hands it on as the request's URL, scheme and authority included: the hosts route it by its path
 * (Express, Koa and Fastify all serve their own routes to it), so the service must read the same path, or every such
 * request of its own went to the host's 404. The authority decides nothing here: absolute URLs come from `issuer`.
 * @example originForm('http://id.example/sentinel/x?y=1') // '/sentinel/x?y=1'
 */
export function originForm(url: string): string {
  if (url.startsWith('/')) return url;
  const origin = ABSOLUTE_FORM_ORIGIN.exec(url);
  if (origin === null) return url;
  const rest = url.slice(origin[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Splits a request target into path and query, the query also as received (`rawQuery`); an absolute form is read as its origin form. */
export function splitURL(target: string): { path: string; query: URLSearchParams; rawQuery: string } {
  const url = originForm(target);
  const mark = url.indexOf('?');
  if (mark === -1) return { path: url, query: new URLSearchParams(), rawQuery: '' };
  const rawQuery = url.slice(mark + 1);
  return { path: url.slice(0, mark), query: new URLSearchParams(rawQuery), rawQuery };
}

/** The fields a request may carry once only (RFC 9110 §5.3) whose repetition Node hides: it keeps the first line. */
const SINGLE_FIELDS: readonly string[] = ['authorization', 'content-type'];

/** Whether the raw header lines name `authorization` or `content-type` more than once (no allocation: every request). */
function repeatsSingleField(raw: readonly string[]): boolean {
  let authorization = 0;
  let contentType = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization += 1;
    else if (name.length === 12 && name.toLowerCase() === 'content-type') contentType += 1;
  }
  return authorization > 1 || contentType > 1;
}

/**
 * The request's headers as the client sent them, for the core and the guards. Node keeps the first of several
 * `Authorization` or `Content-Type` lines and drops the others without a word, where a fetch runtime joins them with
 * `, ` (the Fetch standard) and the core refuses the result as malformed: so two `Authorization` lines passed the
 * guard on Express, Koa and Fastify with whichever token came first, and were refused on fetch. Here they are joined
 * as a fetch runtime joins them, and every adapter refuses them alike. `given` is the host's view of the headers
 * (Fastify's `request.headers`, which a hook may have added to), `request.headers` by default.
 * @example const headers = nodeHeaders(request); sentinel.checkBearer(headers.authorization, expected, { headers, … })
 */
export function nodeHeaders(request: IncomingMessage, given: IncomingHttpHeaders = request.headers): IncomingHttpHeaders {
  const raw = request.rawHeaders;
  if (raw === undefined || !repeatsSingleField(raw)) return given;
  const headers: IncomingHttpHeaders = { ...given };
  for (const field of SINGLE_FIELDS) {
    const lines: string[] = [];
    for (let index = 0; index < raw.length; index += 2) {
      if ((raw[index] as string).toLowerCase() === field) lines.push(raw[index + 1] as string);
    }
    if (lines.length > 1) headers[field] = lines.join(', ');
  }
  return headers;
}

/** Builds a {@link SentinelRequest} from a Node request. `url` is the target relative to the host's mount point. */
export function fromNodeRequest(
  request: IncomingMessage,
  input: { url: string; mountPath?: string | undefined; parsedBody: () => unknown; limit?: number | undefined },
): SentinelRequest {
  const { path, query, rawQuery } = splitURL(input.url);
  return {
    method: request.method ?? 'GET',
    path,
    query,
    rawQuery,
    headers: nodeHeaders(request),
    body: lazyNodeBody(request, input.parsedBody, input.limit),
    ip: request.socket?.remoteAddress,
    secure: (request.socket as { encrypted?: boolean } | undefined)?.encrypted === true,
    mountPath: input.mountPath ?? '',
  };
}

/**
 * Writes a {@link SentinelResponse} to a Node response. `Set-Cookie` is added to what the host's own middleware may
 * have set already (its visitor or consent cookie), as Fastify does, never put in its place: each line is a cookie
 * of its own (RFC 6265 §3), where every other field the service sends is its whole answer. The length of a body is
 * stated, not left to `end()`: Node counts it only when it writes it, so a HEAD (which writes none) went out without
 * the Content-Length its GET has and Koa's and Fastify's HEAD carry (RFC 9110 §9.3.2).
 */
export function writeNodeResponse(response: ServerResponse, result: SentinelResponse): void {
  response.statusCode = result.status;
  for (const [name, value] of Object.entries(result.headers)) {
    if (name === 'set-cookie') response.appendHeader(name, value);
    else response.setHeader(name, value);
  }
  if (result.body !== undefined && !response.hasHeader('content-length')) {
    response.setHeader('content-length', Buffer.byteLength(result.body));
  }
  response.end(result.body);
}
