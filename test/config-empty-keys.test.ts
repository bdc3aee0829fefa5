/**
 * `keys: []` was taken for no `keys` at all: the service generated temporary keys of its own and only warned. An empty
 * list is what a secret that failed to load gives (`JSON.parse(process.env.KEYS ?? '[]')`), and every instance started
 * that way signs with keys of its own, so tokens issued by one fail on the others. It is refused at start.
 */
import { describe, expect, it, vi } from 'vitest';
import { createSentinel, isConfigurationError } from '../src/index.js';
import { baseOptions } from './helpers/fixtures.js';

describe('an empty keys list', () => {
  it('is refused at start with a ConfigurationError naming keys, and no key is generated', () => {
    const warn = vi.fn();
    let caught: unknown;
    try {
      createSentinel({ ...baseOptions(), keys: [], logger: { warn } });
    } catch (error) {
      caught = error;
    }
    expect(isConfigurationError(caught)).toBe(true);
    expect((caught as { field: string }).field).toBe('keys');
    expect((caught as Error).message).toMatch(/empty/);
    expect(warn).not.toHaveBeenCalled();
  });

  it('leaves the development default to keys left out', () => {
    const warn = vi.fn();
    const sentinel = createSentinel({ ...baseOptions(), keys: undefined, logger: { warn } });
    expect(sentinel.jwks().keys.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/temporary/));
  });
});
