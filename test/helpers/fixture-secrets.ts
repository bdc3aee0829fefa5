/**
 * The fixtures' secret values, in a module that loads nothing else: the suite-wide audit setup imports it before
 * any test file, and must not load the service (test/timing.test.ts mocks node:crypto for it).
 */
export const CLIENT_SECRET = 'k3q9x7m2p4t8w1z6b5n0v3c7d2';
export const CC_ONLY_SECRET = 'ccsecretccsecretccsecret01';
export const OTHER_SECRET = 'othersecretothersecret0001';
export const PASSWORD = 'correct horse battery staple';
