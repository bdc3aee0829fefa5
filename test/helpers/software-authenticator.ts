/**
 * A software WebAuthn authenticator for the passkey suites that run without a browser: an ES256 key, its COSE
 * form (RFC 9052 §7, RFC 9053 §2.1), and assertions built as an authenticator builds them (WebAuthn §6.1
 * authenticator data, §6.3.3 signature over authenticatorData ‖ SHA-256(clientDataJSON)). Every field can be
 * set wrong on purpose: origin, RP id, challenge, counter, user handle, backup eligibility, a cross-origin frame.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/** One credential on the authenticator. */
export interface SoftwareCredential {
  id: string;
  privateKey: KeyObject;
  /** The COSE public key, base64url (what `users.passkeys.save` stores). */
  publicKey: string;
  counter: number;
}

/** What an assertion is made for; each field may be wrong on purpose. */
export interface AssertionInput {
  challenge: string;
  origin: string;
  rpId: string;
  userHandle: string;
  counter?: number;
  /** Sets the backup-eligible flag (BE, WebAuthn §6.1): a credential that may be synced between devices. */
  backupEligible?: boolean;
  /** The client data's frame fields (WebAuthn Level 3 §5.8.1), as a browser writes them in a cross-origin iframe. */
  frame?: FrameFields;
}

/** `crossOrigin` and `topOrigin` of the client data; `crossOrigin: false` and no `topOrigin` when not given. */
export interface FrameFields {
  crossOrigin?: unknown;
  topOrigin?: string;
}

function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const x = Buffer.from(String(jwk.x), 'base64url');
  const y = Buffer.from(String(jwk.y), 'base64url');
  // {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y} in canonical CBOR.
  return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
}

/**
 * A new ES256 credential.
 * @example const credential = newCredential();
 */
export function newCredential(): SoftwareCredential {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { id: randomBytes(16).toString('base64url'), privateKey, publicKey: coseKey(publicKey).toString('base64url'), counter: 0 };
}

/**
 * An assertion as the page script posts it (JSON of the browser's `PublicKeyCredential`).
 * @example const assertion = assert(credential, { challenge, origin, rpId: 'localhost', userHandle });
 */
export function assert(credential: SoftwareCredential, input: AssertionInput): string {
  credential.counter = input.counter ?? credential.counter + 1;
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(credential.counter);
  const authenticatorData = Buffer.concat([
    createHash('sha256').update(input.rpId).digest(),
    Buffer.from([input.backupEligible === true ? 0x0d : 0x05]), // user present + user verified (+ backup eligible)
    counter,
  ]);
  const clientDataJSON = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge: input.challenge, origin: input.origin, crossOrigin: false, ...input.frame }),
  );
  const signature = sign(
    'sha256',
    Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]),
    credential.privateKey,
  );
  return JSON.stringify({
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: clientDataJSON.toString('base64url'),
      authenticatorData: authenticatorData.toString('base64url'),
      signature: signature.toString('base64url'),
      userHandle: Buffer.from(input.userHandle).toString('base64url'),
    },
  });
}

/** What a registration (attestation) is made for; each field may be wrong on purpose. */
export interface AttestationInput {
  challenge: string;
  origin: string;
  rpId: string;
  frame?: FrameFields;
}

/** A CBOR byte string's head (major type 2) for `length` bytes. */
function cborBytes(bytes: Buffer): Buffer {
  const head =
    bytes.length < 24
      ? Buffer.from([0x40 + bytes.length])
      : bytes.length < 256
        ? Buffer.from([0x58, bytes.length])
        : Buffer.from([0x59, bytes.length >> 8, bytes.length & 0xff]);
  return Buffer.concat([head, bytes]);
}

/**
 * A registration as the page script posts it (JSON of the browser's `PublicKeyCredential` from `create()`), with
 * `none` attestation (WebAuthn §8.7) and the credential's id and key in the attested credential data (§6.5.1).
 * @example const attestation = attest(newCredential(), { challenge, origin, rpId: 'localhost' });
 */
export function attest(credential: SoftwareCredential, input: AttestationInput): string {
  const id = Buffer.from(credential.id, 'base64url');
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(id.length);
  const authenticatorData = Buffer.concat([
    createHash('sha256').update(input.rpId).digest(),
    Buffer.from([0x45]), // user present + user verified + attested credential data
    Buffer.alloc(4), // counter 0
    Buffer.alloc(16), // AAGUID: none
    idLength,
    id,
    Buffer.from(credential.publicKey, 'base64url'),
  ]);
  // {"fmt": "none", "attStmt": {}, "authData": bytes} in CBOR.
  const attestationObject = Buffer.concat([
    Buffer.from([0xa3, 0x63]),
    Buffer.from('fmt'),
    Buffer.from([0x64]),
    Buffer.from('none'),
    Buffer.from([0x67]),
    Buffer.from('attStmt'),
    Buffer.from([0xa0, 0x68]),
    Buffer.from('authData'),
    cborBytes(authenticatorData),
  ]);
  const clientDataJSON = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge: input.challenge, origin: input.origin, crossOrigin: false, ...input.frame }),
  );
  return JSON.stringify({
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: clientDataJSON.toString('base64url'),
      attestationObject: attestationObject.toString('base64url'),
      transports: ['internal'],
    },
  });
}
