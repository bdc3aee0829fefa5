/**
 * The fixtures' secret values, in a module that loads nothing else: the suite-wide audit setup imports it before
 * any test file, and must not load the service (test/timing.test.ts mocks node:crypto for it). The client secrets
 * are 32 characters or more: a shorter chosen secret is warned about at start (test/config-short-client-secret.test.ts),
 * which would add a warning to every suite that counts them.
 */
export const CLIENT_SECRET = 'k3q9x7m2p4t8w1z6b5n0v3c7d2f8h1j4';
export const CC_ONLY_SECRET = 'ccsecretccsecretccsecretccsecret01';
export const OTHER_SECRET = 'othersecretothersecretothersecret0001';
export const PASSWORD = 'correct horse battery staple';
