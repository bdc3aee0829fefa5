/**
 * The brand JWT exchange rows' requests, made by the runner outside every CPU window: each a complete JWT bearer
 * form (client credentials + a brand JWT about the bench consumer with its own `jti`, because a `jti` is single use).
 *
 * The brand signs with RS256 or ES256, one key of each per run, both published in the brand's key set
 * (BENCH_BRAND_JWKS) so one trusted-issuer entry serves both; each JWT's `kid` picks its key. RS256 is the headline
 * (the default of the identity providers brands run: Auth0, Okta, Entra ID, Google), ES256 stands beside it.
 *
 * Signed with node:crypto directly, as the guard tokens are. An RS256 signature costs about 0.3 ms, so the JWTs are
 * minted once per run and algorithm, with an hour's life (the longest the service accepts), and handed to every
 * round: each round starts its server afresh, so each server sees each `jti` once. A pool older than half an hour
 * is minted again.
 */
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { BRAND_ISSUER, CLIENT_ID, CLIENT_SECRET, CONSUMER_ID, JWT_BEARER_GRANT } from './fixtures.js';
import type { Workload } from './registry.js';

/** The algorithms the brand signs with in the bench. */
export type BrandAlgorithm = 'RS256' | 'ES256';

/** The form bodies, used round-robin from `next`. */
export interface BrandAssertions {
  bodies: string[];
  next: number;
}

const BRAND_LIFETIME_S = 3600;
const REMINT_AFTER_MS = 30 * 60_000;

/** Whether a workload sends brand JWTs (the exchange rows). */
export function isJwtBearer(workload: Workload): workload is 'jwt-bearer-rs256' | 'jwt-bearer-es256' {
  return workload === 'jwt-bearer-rs256' || workload === 'jwt-bearer-es256';
}

/** The algorithm a JWT bearer workload's brand signs with. */
export function brandAlgorithmOf(workload: 'jwt-bearer-rs256' | 'jwt-bearer-es256'): BrandAlgorithm {
  return workload === 'jwt-bearer-rs256' ? 'RS256' : 'ES256';
}

/** The `kid` of the brand's key for `alg`. */
export const brandKid = (alg: BrandAlgorithm): string => `bench-brand-${alg.toLowerCase()}-1`;

/** `count` request bodies, each with a brand JWT of an hour's life signed with `alg`, addressed to the exchanging client. */
export function mintBrandAssertions(brandPrivateJwk: JWK, alg: BrandAlgorithm, count: number): BrandAssertions {
  const key = createPrivateKey({ key: brandPrivateJwk as never, format: 'jwk' });
  const header = Buffer.from(JSON.stringify({ alg, kid: brandKid(alg) })).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const claims = { iss: BRAND_ISSUER, sub: CONSUMER_ID, aud: CLIENT_ID, iat, exp: iat + BRAND_LIFETIME_S, jti: randomUUID() };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const options = alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
    const signature = sign('sha256', Buffer.from(input), options).toString('base64url');
    bodies.push(
      new URLSearchParams({
        grant_type: JWT_BEARER_GRANT,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        assertion: `${input}.${signature}`,
      }).toString(),
    );
  }
  return { bodies, next: 0 };
}

/**
 * The brand of one run: its two keys, their public halves handed to every server child started after this (as
 * BENCH_BRAND_JWKS, which bench/server-child.ts passes on with the environment), and the JWTs of each algorithm.
 */
export class Brand {
  readonly #privateJwks: Record<BrandAlgorithm, JWK>;
  readonly #count: number;
  readonly #pools = new Map<BrandAlgorithm, { bodies: string[]; mintedAt: number }>();

  private constructor(privateJwks: Record<BrandAlgorithm, JWK>, count: number) {
    this.#privateJwks = privateJwks;
    this.#count = count;
  }

  /**
   * Makes the brand's keys and publishes them to the children; `count` is the JWTs each round can use at most.
   * @example const brand = await Brand.create(60_000); state.brand = brand.assertions('RS256');
   */
  static async create(count: number): Promise<Brand> {
    const privateJwks = {} as Record<BrandAlgorithm, JWK>;
    const publicJwks: JWK[] = [];
    for (const alg of ['RS256', 'ES256'] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const meta = { kid: brandKid(alg), alg, use: 'sig' };
      privateJwks[alg] = { ...(await exportJWK(privateKey)), ...meta };
      publicJwks.push({ ...(await exportJWK(publicKey)), ...meta });
    }
    process.env.BENCH_BRAND_JWKS = JSON.stringify(publicJwks);
    return new Brand(privateJwks, count);
  }

  /** A round's JWTs of `alg`, from the start of the run's pool (minted on first use, again when half their life is gone). */
  assertions(alg: BrandAlgorithm): BrandAssertions {
    let pool = this.#pools.get(alg);
    if (pool === undefined || Date.now() - pool.mintedAt > REMINT_AFTER_MS) {
      pool = { bodies: mintBrandAssertions(this.#privateJwks[alg], alg, this.#count).bodies, mintedAt: Date.now() };
      this.#pools.set(alg, pool);
    }
    return { bodies: pool.bodies, next: 0 };
  }
}
