/**
 * The pages allow one image source: the branding logo's. A protocol-relative `logoUrl` (`//cdn.example.com/logo.svg`,
 * or `/\cdn.example.com/…`, which browsers read the same) starts with a slash, and was taken for a path on this host:
 * the CSP allowed `'self'` and blocked the logo, which the browser loads from the other host. A relative one
 * (`logo.svg`) allowed nothing, though it is on this host. Each now allows where the browser loads it from.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { makeSentinel } from './helpers/fixtures.js';

async function imgSrc(logoUrl: string): Promise<string | undefined> {
  const sentinel = makeSentinel({ branding: { productName: 'Acme ID', logoUrl } });
  const started = await call(sentinel, { path: AUTHORIZE_PATH, query: authorizeQuery() });
  const [path, query] = String(started.headers.location).split('?') as [string, string];
  const page = await call(sentinel, { path, query });
  expect(page.status).toBe(200);
  return /(?:^|; )img-src ([^;]*)/.exec(String(page.headers['content-security-policy']))?.[1];
}

describe('the logo image source', () => {
  it('a protocol-relative logo allows its host (in the page scheme), not this one', async () => {
    expect(await imgSrc('//cdn.example.com/logo.svg')).toBe('cdn.example.com');
    expect(await imgSrc('//cdn.example.com:8443/logo.svg')).toBe('cdn.example.com:8443');
    expect(await imgSrc('/\\cdn.example.com/logo.svg')).toBe('cdn.example.com');
  });

  it('a relative logo is on this host', async () => {
    expect(await imgSrc('logo.svg')).toBe("'self'");
  });

  it('absolute URLs and paths are as before; a host no source can name allows nothing', async () => {
    expect(await imgSrc('https://cdn.example.com/logo.svg')).toBe('https://cdn.example.com');
    expect(await imgSrc('/static/logo.svg')).toBe("'self'");
    expect(await imgSrc('//*/logo.svg')).toBe("'none'");
    expect(await imgSrc('//a;b/logo.svg')).toBe("'none'");
  });
});
