/**
 * Request parameters: one parser for query strings, raw form bodies and bodies a host parser already produced.
 *
 * RFC 6749 §3.1: parameters sent without a value are treated as omitted, a parameter must not be given more than
 * once, and unknown parameters are ignored. Only the parameters a handler reads are checked for repetition.
 */
import { OAuthError } from '../errors.js';

/** Parameters of one request: the values of each name, or `null` when a host parser produced a non-string. */
export type ParamMap = Map<string, string[] | null>;

/** Collects a URLSearchParams into a {@link ParamMap}. */
export function fromSearchParams(search: URLSearchParams): ParamMap {
  return fromSearchParamsWithin(search, Number.POSITIVE_INFINITY) as ParamMap;
}

/**
 * Collects a URLSearchParams into a {@link ParamMap}, or answers `null` as soon as names and values together (plus
 * two characters per parameter) exceed `maxLength`: one pass that stops at the limit, so an oversized query is
 * neither walked twice nor copied whole.
 * @example const params = fromSearchParamsWithin(request.query, 8192); // null: refuse with 414
 */
export function fromSearchParamsWithin(search: URLSearchParams, maxLength: number): ParamMap | null {
  const map: ParamMap = new Map();
  let length = 0;
  for (const [name, value] of search) {
    length += name.length + value.length + 2;
    if (length > maxLength) return null;
    const values = map.get(name);
    if (values) values.push(value);
    else map.set(name, [value]);
  }
  return map;
}

/**
 * Flattens a body a host parser produced (`express.urlencoded`, `@fastify/formbody`, qs, JSON parsers): arrays
 * become repeated values, anything that is not a string (nested objects, numbers) is marked malformed.
 */
export function fromParsedBody(body: Record<string, unknown>): ParamMap {
  const map: ParamMap = new Map();
  for (const name of Object.keys(body)) {
    const value = body[name];
    if (typeof value === 'string') map.set(name, [value]);
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) map.set(name, value as string[]);
    else map.set(name, null);
  }
  return map;
}

/**
 * The single value of `name`, or `undefined` when absent or empty.
 * @throws OAuthError invalid_request when the parameter is repeated or malformed.
 */
export function single(params: ParamMap, name: string): string | undefined {
  const values = params.get(name);
  if (values === undefined) return undefined;
  if (values === null) throw new OAuthError('invalid_request', `parameter ${name} is malformed`);
  if (values.length > 1) throw new OAuthError('invalid_request', `parameter ${name} is given more than once`);
  const value = values[0];
  return value === '' ? undefined : value;
}

/**
 * {@link single} for a query string, read in place: no {@link ParamMap} of every parameter for the one asked.
 * @throws OAuthError invalid_request when the parameter is repeated.
 * @example singleQuery(new URLSearchParams('state=abc'), 'state') // 'abc'
 */
export function singleQuery(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new OAuthError('invalid_request', `parameter ${name} is given more than once`);
  const value = values[0];
  return value === '' ? undefined : value;
}

/**
 * The single value of `name`.
 * @throws OAuthError invalid_request when it is missing, empty, repeated or malformed.
 */
export function required(params: ParamMap, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `parameter ${name} is required`);
  return value;
}
