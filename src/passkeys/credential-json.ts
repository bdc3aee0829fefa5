/**
 * Shape checks of what the page script posts (the browser's WebAuthn answer as JSON), before the library sees it:
 * a hostile post gets the same refusal as a wrong signature, never an exception from deep inside the verifier.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

const B64URL = /^[A-Za-z0-9_-]+$/;
/** Generous for a credential's fields; the form itself is already bounded by `bodyLimit`. */
const MAX_FIELD = 8192;

function b64(value: unknown, optional = false): boolean {
  if (value === undefined) return optional;
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD && B64URL.test(value);
}

function parseObject(json: string | undefined): Record<string, unknown> | null {
  if (json === undefined || json === '') return null;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The part both ceremonies share: a `public-key` credential whose `rawId` equals its base64url `id`, and its
 * `response` object (checked further by each parser).
 */
function credential(json: string | undefined): { id: string; inner: Record<string, unknown> } | null {
  const value = parseObject(json);
  if (value === null || value.type !== 'public-key' || !b64(value.id) || value.rawId !== value.id) return null;
  const inner = value.response;
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return null;
  return { id: value.id as string, inner: inner as Record<string, unknown> };
}

/** The library's JSON envelope around a checked `response`. */
function envelope<R>(id: string, response: R) {
  return { id, rawId: id, type: 'public-key' as const, clientExtensionResults: {}, response };
}

/**
 * The posted `assertion`, or `null` when it is not a well-formed WebAuthn assertion.
 *
 * @example
 * const assertion = parseAssertion(single(form, 'assertion'));
 */
export function parseAssertion(json: string | undefined): AuthenticationResponseJSON | null {
  const parts = credential(json);
  if (parts === null) return null;
  const { id, inner } = parts;
  if (!b64(inner.clientDataJSON) || !b64(inner.authenticatorData) || !b64(inner.signature) || !b64(inner.userHandle, true)) {
    return null;
  }
  return envelope(id, {
    clientDataJSON: inner.clientDataJSON as string,
    authenticatorData: inner.authenticatorData as string,
    signature: inner.signature as string,
    userHandle: inner.userHandle as string | undefined,
  });
}

/**
 * The posted `attestation`, or `null` when it is not a well-formed WebAuthn attestation.
 *
 * @example
 * const attestation = parseAttestation(single(form, 'attestation'));
 */
export function parseAttestation(json: string | undefined): RegistrationResponseJSON | null {
  const parts = credential(json);
  if (parts === null) return null;
  const { id, inner } = parts;
  if (!b64(inner.clientDataJSON) || !b64(inner.attestationObject)) return null;
  const transports = Array.isArray(inner.transports)
    ? inner.transports
        .filter((transport): transport is string => typeof transport === 'string' && /^[a-z-]{1,20}$/.test(transport))
        .slice(0, 8)
    : [];
  return envelope(id, {
    clientDataJSON: inner.clientDataJSON as string,
    attestationObject: inner.attestationObject as string,
    transports: transports as RegistrationResponseJSON['response']['transports'],
  });
}

/**
 * Whether the browser says the ceremony ran in a frame of another origin: `crossOrigin` other than `false` or
 * absent, or a `topOrigin` at all (WebAuthn Level 3 §5.8.1). §7.1 step 10 and §7.2 step 13 accept such a ceremony
 * only where the RP expects to be framed, and the service never does: its pages forbid it (`frame-ancestors
 * 'none'`), and a framed prompt is the clickjacking the ban is there for. The library checks `topOrigin` only when
 * signing in and only when the browser sends one, so this is asked of both ceremonies. Unreadable client data is
 * left to the verifier, which refuses it.
 *
 * @example
 * if (framedCeremony(assertion.response.clientDataJSON)) return refuse('passkey ceremony in a cross-origin frame');
 */
export function framedCeremony(clientDataJSON: string): boolean {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (typeof data !== 'object' || data === null) return false;
  const { crossOrigin, topOrigin } = data as { crossOrigin?: unknown; topOrigin?: unknown };
  return (crossOrigin !== undefined && crossOrigin !== false) || topOrigin !== undefined;
}
