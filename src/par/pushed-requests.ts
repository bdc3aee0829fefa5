/**
 * Pushed authorization requests in the Store (RFC 9126 §2.2): the parameters a client pushed, under the digest of
 * a random `request_uri`, for {@link REQUEST_URI_TTL_SECONDS}. The authorization endpoint takes the record with
 * the Store's atomic `take`, so a `request_uri` is used at most once, across instances. Key, value and TTL:
 * docs/ARCHITECTURE.md#stored-records (`par:`).
 */
import type { SentinelContext } from '../http/context.js';
import { digest, randomSecret } from '../lib/random-secrets.js';
import { parseStoredRecord } from '../stores/stored-record.js';

/** RFC 9126 §2.2: the URN namespace of request URIs. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** Lifetime of a pushed request: short, since the client redirects the browser right after pushing. */
export const REQUEST_URI_TTL_SECONDS = 60;

/** What a pushed request stands for. */
export interface PushedRequest {
  accountId: string;
  clientId: string;
  /** The pushed parameters, in order, repetitions kept (they are validated again at the authorization endpoint). */
  params: [string, string][];
}

function parsePushed(stored: string | null): PushedRequest | null {
  return parseStoredRecord<PushedRequest>(
    stored,
    (record) => typeof record.accountId === 'string' && typeof record.clientId === 'string' && Array.isArray(record.params),
  );
}

function pushedKey(requestUri: string): string {
  return `par:${digest(requestUri)}`;
}

/**
 * Stores a validated pushed request; returns its `request_uri`.
 * @example const requestUri = await storePushedRequest(context, { accountId, clientId, params: [...query] });
 */
export async function storePushedRequest(context: SentinelContext, pushed: PushedRequest): Promise<string> {
  const requestUri = `${REQUEST_URI_PREFIX}${randomSecret()}`;
  await context.store.set(pushedKey(requestUri), JSON.stringify(pushed), REQUEST_URI_TTL_SECONDS * 1000);
  return requestUri;
}

/**
 * Reads a pushed request without using it up (to check whose it is before spending it).
 * @example const pushed = await peekPushedRequest(context, requestUri);
 */
export async function peekPushedRequest(context: SentinelContext, requestUri: string): Promise<PushedRequest | null> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX) || requestUri.length > 200) return null;
  const stored = await context.store.get(pushedKey(requestUri));
  return parsePushed(stored);
}

/**
 * Uses a pushed request up; `null` when it is gone (used, expired, never pushed). Of concurrent uses, one wins.
 * @example const pushed = await takePushedRequest(context, requestUri);
 */
export async function takePushedRequest(context: SentinelContext, requestUri: string): Promise<PushedRequest | null> {
  const stored = await context.store.take(pushedKey(requestUri));
  return parsePushed(stored);
}
