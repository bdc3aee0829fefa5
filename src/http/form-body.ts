/**
 * Reading a form body at the core: size cap, content type, and whatever shape the host handed over.
 */
import { isBodyTimeout, isClientAborted } from './body-failures.js';
import { OAuthError } from '../errors.js';
import { headerValue, type SentinelBody, type SentinelRequest } from './messages.js';
import { fromParsedBody, type ParamMap } from './params.js';
import { parseForm } from './form-urlencoded.js';
import { isThenable } from '../lib/thenable.js';

const BODY_TOO_LARGE = Symbol.for('sentinel-idp.BodyTooLarge');

/**
 * Thrown by body readers (e.g. the Node reader of the adapters) when a body exceeds the cap; the core answers
 * 413 (RFC 9110 §15.5.14) with `invalid_request`.
 *
 * @example
 * if (size > limit) throw new BodyTooLargeError(limit);
 */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    Object.defineProperty(this, BODY_TOO_LARGE, { value: true });
  }
}

/**
 * True for a {@link BodyTooLargeError} from any copy of this package (a brand check, not `instanceof`), so an adapter's
 * reader and the core agree on the 413 (RFC 9110 §15.5.14).
 */
export function isBodyTooLarge(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BODY_TOO_LARGE] === true;
}

function tooLarge(limit: number): OAuthError {
  return new OAuthError('invalid_request', `request body exceeds ${limit} bytes`, { status: 413, headers: { connection: 'close' } });
}

/** The spellings clients send nearly always, accepted without parsing. */
const COMMON_FORM_TYPES: ReadonlySet<string> = new Set([
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded;charset=UTF-8',
  'application/x-www-form-urlencoded; charset=UTF-8',
  'application/x-www-form-urlencoded;charset=utf-8',
  'application/x-www-form-urlencoded; charset=utf-8',
]);

/** True when the Content-Type is `application/x-www-form-urlencoded`, with no charset or UTF-8. */
function isFormContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (COMMON_FORM_TYPES.has(contentType)) return true;
  const [type, ...parameters] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'application/x-www-form-urlencoded') return false;
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=');
    if (name?.trim().toLowerCase() !== 'charset') continue;
    const charset = value?.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/**
 * True when the Content-Type names the form media type, whatever its parameters: the body is meant as a form, so
 * {@link readForm} reads it (and refuses a charset other than UTF-8). For an endpoint where a body is optional.
 *
 * @example
 * if (declaresForm(headerValue(request, 'content-type'))) params = await readForm(request, limit);
 */
export function declaresForm(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/**
 * The answer to a body that failed on the client's side, or `undefined` for any other failure: one that did not
 * arrive within `bodyTimeout` (408) or that the client cut off (400; the answer reaches no one). Neither is a server
 * failure, so neither reaches `onError`; both close the connection. Every body reader answers them alike.
 *
 * @example
 * try { body = await read(); } catch (error) { throw clientBodyFailure(error) ?? error; }
 */
export function clientBodyFailure(error: unknown): OAuthError | undefined {
  if (isBodyTimeout(error)) {
    return new OAuthError('invalid_request', 'the request body did not arrive in time', { status: 408, headers: { connection: 'close' } });
  }
  if (isClientAborted(error))
    return new OAuthError('invalid_request', 'the request body was cut off', { headers: { connection: 'close' } });
  return undefined;
}

/**
 * The form parameters of a token-endpoint style request.
 * @throws OAuthError 400 invalid_request for a wrong Content-Type or a body cut off by the client, 408 for a body
 * that missed `bodyTimeout`, 413 for a body over `limit` bytes.
 */
export async function readForm(request: SentinelRequest, limit: number): Promise<ParamMap> {
  const declared = headerValue(request, 'content-length');
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  if (!isFormContentType(headerValue(request, 'content-type'))) {
    throw new OAuthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded (charset UTF-8)');
  }
  let body: SentinelBody | undefined;
  try {
    const read = typeof request.body === 'function' ? request.body() : request.body;
    body = isThenable(read) ? await read : read;
  } catch (error) {
    if (isBodyTooLarge(error)) throw tooLarge(limit);
    throw clientBodyFailure(error) ?? error;
  }
  // `null` is outside SentinelBody's type, but a JavaScript host's way of saying "no body" as often as `undefined`.
  if (body === undefined || (body as unknown) === null) return new Map();
  if (typeof body === 'string') {
    if (Buffer.byteLength(body) > limit) throw tooLarge(limit);
    return parseForm(body);
  }
  if (body instanceof Uint8Array) {
    if (body.byteLength > limit) throw tooLarge(limit);
    return parseForm(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  }
  return fromParsedBody(body);
}
