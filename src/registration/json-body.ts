/**
 * Reading the JSON body of a registration request (RFC 7591 §3.1): size cap, content type, and an object at the
 * top. Every refusal is the registration error `invalid_client_metadata` (RFC 7591 §3.2.2), `400` but for a body
 * over `bodyLimit` (`413`), and nothing is stored.
 */
import { clientBodyFailure, isBodyTooLarge } from '../http/form-body.js';
import { OAuthError } from '../errors.js';
import { headerValue, type SentinelBody, type SentinelRequest } from '../http/messages.js';

function invalid(description: string, headers?: Record<string, string>): OAuthError {
  return new OAuthError('invalid_client_metadata', description, headers === undefined ? {} : { headers });
}

function tooLarge(limit: number): OAuthError {
  // 413 as on every other endpoint (RFC 9110 §15.5.14, the `bodyLimit` option): the size is the message's fault, not
  // the metadata's. The rest of an oversized body is not read: the connection is closed rather than drained.
  return new OAuthError('invalid_client_metadata', `the request body exceeds ${limit} bytes`, {
    status: 413,
    headers: { connection: 'close' },
  });
}

function isJSONContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type, ...parameters] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const [name, value] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') return true;
    const charset = value?.trim().replace(/^"|"$/g, '').toLowerCase();
    return charset === 'utf-8' || charset === 'utf8';
  });
}

function objectOf(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('the request body must be a JSON object');
  return value as Record<string, unknown>;
}

/** The body as a JSON object, read at most `limit` bytes of it. */
export async function readJSONObject(request: SentinelRequest, limit: number): Promise<Record<string, unknown>> {
  refuseDeclaredOverLimit(request, limit);
  if (!isJSONContentType(headerValue(request, 'content-type'))) throw invalid('Content-Type must be application/json');
  return objectIn(await readBody(request, limit), limit);
}

/**
 * The body as a JSON object, or `undefined` for a request with neither a body nor a Content-Type (a POST that asks
 * for nothing but the defaults). A body without a Content-Type is refused like any other wrong type: deciding by the
 * header alone ignored it, so a secret rotation asking to end a leaked secret at once (`previous_secret_expires_in: 0`)
 * was answered 200 with the full overlap instead.
 */
export async function readOptionalJSONObject(request: SentinelRequest, limit: number): Promise<Record<string, unknown> | undefined> {
  if (headerValue(request, 'content-type') !== undefined) return readJSONObject(request, limit);
  refuseDeclaredOverLimit(request, limit);
  if (isEmpty(await readBody(request, limit))) return undefined;
  throw invalid('Content-Type must be application/json');
}

function refuseDeclaredOverLimit(request: SentinelRequest, limit: number): void {
  const declared = headerValue(request, 'content-length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

async function readBody(request: SentinelRequest, limit: number): Promise<SentinelBody | undefined> {
  try {
    return typeof request.body === 'function' ? await request.body() : request.body;
  } catch (error) {
    if (isBodyTooLarge(error)) throw tooLarge(limit);
    throw clientBodyFailure(error) ?? error;
  }
}

/** No body at all: nothing sent, or a host body parser's empty object for a request it had nothing to parse in. */
function isEmpty(body: SentinelBody | undefined): boolean {
  if (body === undefined) return true;
  if (typeof body === 'string') return body.length === 0;
  if (body instanceof Uint8Array) return body.byteLength === 0;
  return Object.keys(body).length === 0;
}

function objectIn(body: SentinelBody | undefined, limit: number): Record<string, unknown> {
  if (body === undefined) throw invalid('the request body must be a JSON object');
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return objectOf(body); // parsed by the host (express.json(), …)
  const text = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (Buffer.byteLength(text) > limit) throw tooLarge(limit);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('the request body is not valid JSON');
  }
  return objectOf(parsed);
}
