/**
 * Consumer participant ids: the `state` of the v2 app token request names the consumer a token is bound to.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The default consumer-id check for `state` of platform-operations.md §4.1 token request: the platform's two participant-id
 * shapes, a lower-case UUID or 64 lower-case hex characters.
 * @example isParticipantId('0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b') // true
 */
export function isParticipantId(value: string): boolean {
  return value.length === 36 ? UUID.test(value) : value.length === 64 && HEX64.test(value);
}
