/**
 * What a rotation needs besides the change to the document (mutations.ts): whether one is due, the private keys made
 * beforehand, and the policy this instance writes with it.
 */
import { generatePrivateJWKInPool, type JWK, type SigningAlgorithm } from '../signing-keys.js';
import { indexRing, type RingDocument, rotationDue } from './document.js';
import type { RingPolicy } from './mutations.js';
import type { KeyRotationOptions } from './options.js';
import type { RingTimings } from './timings.js';

/** Whether `document` needs a rotation at `now`: there is none yet, or one of `algorithms` is due for a new key. */
export function rotationDueIn(
  document: RingDocument | null,
  algorithms: readonly SigningAlgorithm[],
  timings: RingTimings,
  now: number,
): boolean {
  if (document === null) return true;
  const index = indexRing(document);
  return algorithms.some((alg) => rotationDue(index, alg, now, timings.rotateEveryMs, timings.prePublishMs));
}

/** What this instance's rotations write into the ring, so the CLI pre-publishes and prunes alike. */
export function policyOf(rotation: KeyRotationOptions, timings: RingTimings): RingPolicy {
  return { prePublishSeconds: rotation.prePublishSeconds, retainSeconds: timings.retainMs / 1000 };
}

/**
 * The private keys of a rotation, made on the thread pool before the ring's lock is taken: a 2048-bit RSA key costs
 * 100 ms or more of CPU, which would otherwise stall every request of the instance that rotates. Keys that end up
 * unused (another instance rotated first) are dropped.
 */
export async function generateKeys(algorithms: readonly SigningAlgorithm[]): Promise<Map<SigningAlgorithm, JWK>> {
  return new Map(await Promise.all(algorithms.map(async (alg) => [alg, await generatePrivateJWKInPool(alg)] as const)));
}
