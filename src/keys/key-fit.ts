/**
 * The checks every imported key passes, a private JWK or an external signer's public one: its algorithm, and that
 * the key fits it. Shared by `signing-keys.ts` and `external-signer-key.ts`.
 */
import type { KeyObject } from 'node:crypto';
import { ConfigurationError } from '../errors.js';
import type { JWK, SigningAlgorithm } from './key-types.js';

export function inferAlgorithm(jwk: JWK, field: string): SigningAlgorithm {
  if (jwk.alg !== undefined) {
    if (['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA'].includes(jwk.alg)) return jwk.alg as SigningAlgorithm;
    throw new ConfigurationError(`${field}.alg`, `unsupported algorithm ${jwk.alg}`);
  }
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'EC' && jwk.crv === 'P-384') return 'ES384';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  if (jwk.kty === 'RSA') return 'RS256';
  throw new ConfigurationError(field, `unsupported key type ${String(jwk.kty)}/${String(jwk.crv)}`);
}

/** How node:crypto names the curves of the ES algorithms (`asymmetricKeyDetails.namedCurve`). */
const EC_CURVES: Partial<Record<SigningAlgorithm, { curve: string; name: string }>> = {
  ES256: { curve: 'prime256v1', name: 'P-256' },
  ES384: { curve: 'secp384r1', name: 'P-384' },
};

function describeKey(key: KeyObject): string {
  const { namedCurve, modulusLength } = key.asymmetricKeyDetails ?? {};
  const type = key.asymmetricKeyType;
  if (type === 'ec') return `an EC key on ${Object.values(EC_CURVES).find((entry) => entry.curve === namedCurve)?.name ?? namedCurve}`;
  if (type === 'rsa' || type === 'rsa-pss') return `a ${modulusLength}-bit RSA key`;
  return `an ${String(type)} key`;
}

/**
 * Refuses a key its algorithm does not fit (RFC 7518 §3.3-3.5, RFC 8037 §3.1): node:crypto would sign with it anyway,
 * the JWKS would publish it with that `alg`, and every standard verifier would refuse the tokens. RSA keys under
 * 2048 bits are refused as RFC 7518 §3.3 requires. The message names the key (field, kid), never its material.
 */
export function assertKeyFits(alg: SigningAlgorithm, key: KeyObject, field: string, kid: unknown): void {
  const type = key.asymmetricKeyType;
  const curve = EC_CURVES[alg];
  let needs: string | null = null;
  if (curve !== undefined) {
    if (type !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== curve.curve) needs = `an EC key on ${curve.name}`;
  } else if (alg === 'EdDSA') {
    if (type !== 'ed25519' && type !== 'ed448') needs = 'an OKP key (Ed25519 or Ed448)';
  } else if (type !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    needs = 'an RSA key of at least 2048 bits';
  }
  if (needs === null) return;
  const named = typeof kid === 'string' && kid !== '' ? ` (kid ${kid})` : '';
  throw new ConfigurationError(field, `${alg} needs ${needs}, and this key${named} is ${describeKey(key)}`);
}
