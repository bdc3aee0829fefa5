/**
 * The types of signing keys: the `keys` option's JWKs and external signers, an imported key, a service's key set.
 * Apart from `signing-keys.ts` (which re-exports them), so the files that import keys share them without a cycle.
 */
import type { KeyObject } from 'node:crypto';

/**
 * A JSON Web Key (RFC 7517) as accepted in the `keys` option (private keys) and published in the JWKS (public parts).
 * @example const key: JWK = JSON.parse(process.env.SENTINEL_KEYS!)[0];
 */
export type JWK = Record<string, unknown> & { kty: string; kid?: string; alg?: string };

/**
 * Algorithms sentinel-idp signs with (RFC 7518 §3, RFC 8037 for EdDSA); inferred from the key when `alg` is absent.
 * @example const alg: SigningAlgorithm = 'ES256';
 */
export type SigningAlgorithm = 'ES256' | 'ES384' | 'RS256' | 'PS256' | 'EdDSA';

/**
 * A signer whose private key stays outside the process (an HSM, a cloud KMS): `sign` receives the JWS signing
 * input and returns the signature in JWS form (raw `r||s` for ECDSA, RFC 7518 §3.4).
 * @example const key = { signer: await pkcs11Signer({ library, tokenLabel: 'idp', pin, keyLabel: 'signing' }) };
 */
export interface ExternalSigner {
  kid: string;
  alg: SigningAlgorithm;
  /** The public key as a JWK (RFC 7517), published in the JWKS. */
  publicJwk: JWK;
  /**
   * Signs `data` with the private key: the raw signature the algorithm defines (JWS form, RFC 7518 §3), as any
   * ArrayBuffer view or ArrayBuffer of any realm. `signal` aborts when the signing deadline (`signingTimeout`)
   * passes: the answer is no longer read, so work not started yet may be dropped.
   */
  sign(data: Uint8Array, options?: { signal?: AbortSignal | undefined }): Promise<Uint8Array>;
}

/** One imported key; `external` is set (and `privateKey` absent) for a key that signs outside the process. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly privateKey?: KeyObject;
  readonly external?: ExternalSigner;
  readonly publicKey: KeyObject;
  readonly publicJWK: JWK;
}

/** The keys of one service: the first signs, all verify and are published. */
export interface KeySet {
  readonly signer: SigningKey;
  /**
   * The active key of each algorithm (the first configured key of that algorithm): ID tokens are signed with the
   * key of the algorithm their client asks for (OpenID Connect `id_token_signed_response_alg`).
   */
  readonly byAlg: ReadonlyMap<SigningAlgorithm, SigningKey>;
  readonly byKid: ReadonlyMap<string, SigningKey>;
  readonly jwks: { keys: JWK[] };
}
