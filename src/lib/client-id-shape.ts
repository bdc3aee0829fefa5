/**
 * Whether a client id could name a client at all, for the records that name one a caller wrote (a refusal's event,
 * a span): an app's id is an identifier (src/lib/identifier-schema.ts) and a client ID metadata document's is an
 * https URL (src/apps/client-id-metadata.ts takes one of at most 2000 characters). Anything else is the caller's
 * text of any length and content, kilobytes or control characters, that no record needs.
 */

/** An identifier: 1–256 characters, none a control character, `/`, `?` or `#`. */
const IDENTIFIER = /^[^\u0000-\u001f\u007f/?#]{1,256}$/;
/** An https URL of at most 2000 characters without white space or control characters. */
const DOCUMENT_URL = /^https:\/\/[^\u0000-\u0020\u007f]{1,1992}$/;

/**
 * Whether `clientId` could be a client's id: an identifier, or a client ID metadata document URL.
 *
 * @example couldBeClientId('6f1c0b7e-3d7a-4c1e-9a51-1f0a2b3c4d5e') // true
 * @example couldBeClientId('made-up\r\nInjected: 1') // false
 */
export function couldBeClientId(clientId: string): boolean {
  return IDENTIFIER.test(clientId) || DOCUMENT_URL.test(clientId);
}

/**
 * Whether `clientId` is, where client ID metadata documents are on, a document's URL: any https id (the test the
 * resolver makes, src/apps/client-id-metadata.ts). Such clients are minted by whoever serves a document, so no count
 * may be kept per id (metric attributes).
 *
 * @example namesClientDocument('https://agent.example.com/client.json', true) // true
 * @example namesClientDocument('https://agent.example.com/client.json', false) // false: then an id of the registry
 */
export function namesClientDocument(clientId: string, documentsEnabled: boolean): boolean {
  return documentsEnabled && clientId.startsWith('https://');
}
