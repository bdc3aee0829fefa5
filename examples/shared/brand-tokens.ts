/**
 * The platform's token-retrieval API of the examples: `GET /api/account/:accountId/consumer/:consumerId/brand/tokens`
 * answers the brand tokens stored for that consumer. The route is guarded by the adapter's `requireAccessToken`,
 * which checks that the access token's account and consumer are the ones in the path (RFC 6750 §2.1); this module
 * only decides the answers before and after it, the same in every framework.
 */
import { isParticipantId } from 'sentinel-idp';

/** One brand token as the platform stores it for a consumer. Demo values. */
export interface BrandToken {
  brandId: string;
  token: string;
  createdAt: string;
}

/** A framework-neutral answer: status, JSON body. */
export interface JSONAnswer {
  status: number;
  body: unknown;
}

/** The consumers seeded with brand tokens (a UUID and a 64-hex participant id, the platform's two shapes). */
export const DEMO_CONSUMERS = [
  '0b3f6a2e-8c1d-4e5f-9a7b-1c2d3e4f5a6b',
  '5f2b9c1e7a3d4f608b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6',
] as const;

/** Creates the store, seeded for {@link DEMO_CONSUMERS} in one account. */
export function createBrandTokenStore(accountId: string): Map<string, BrandToken[]> {
  const store = new Map<string, BrandToken[]>();
  const createdAt = new Date().toISOString();
  store.set(`${accountId}/${DEMO_CONSUMERS[0]}`, [
    { brandId: 'acme-coffee', token: 'demo-brand-token-acme-0001', createdAt },
    { brandId: 'acme-tea', token: 'demo-brand-token-acme-0002', createdAt },
  ]);
  store.set(`${accountId}/${DEMO_CONSUMERS[1]}`, [{ brandId: 'globex', token: 'demo-brand-token-globex-0001', createdAt }]);
  return store;
}

/**
 * 400 for a path consumer id that is not a participant id, else `null`. Runs before the bearer guard: a malformed
 * id is a client mistake to name plainly, not an authorization failure.
 * @example const problem = consumerIdProblem(req.params.consumerId); if (problem) return res.status(problem.status).json(problem.body);
 */
export function consumerIdProblem(consumerId: string): JSONAnswer | null {
  if (isParticipantId(consumerId)) return null;
  return {
    status: 400,
    body: { error: 'invalid_request', error_description: 'consumerId must be a UUID or 64 lower-case hex characters' },
  };
}

/**
 * The API's answer once the guard passed: 200 with the tokens, 404 when none are stored.
 * @example const { status, body } = brandTokensAnswer(store, req.params.accountId, req.params.consumerId);
 */
export function brandTokensAnswer(store: Map<string, BrandToken[]>, accountId: string, consumerId: string): JSONAnswer {
  const tokens = store.get(`${accountId}/${consumerId}`);
  if (tokens === undefined)
    return { status: 404, body: { error: 'not_found', error_description: 'no brand tokens stored for this consumer' } };
  return { status: 200, body: { accountId, consumerId, tokens } };
}
