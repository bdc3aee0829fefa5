/**
 * A software WebAuthn authenticator for the passkey suites that run without a browser: an ES256 key, its COSE
 * form (RFC 9052 §7, RFC 9053 §2.1), and assertions built as an authenticator builds them (WebAuthn §6.1
 * authenticator data, §6.3.3 signature over authenticatorData ‖ SHA-256(clientDataJSON)). Every field can be
 * set wrong on purpose: origin, RP id, challenge, counter, user handle, backup eligibility.
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
    JSON.stringify({ type: 'webauthn.get', challenge: input.challenge, origin: input.origin, crossOrigin: false }),
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
