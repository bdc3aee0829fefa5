import { describe } from 'vitest';
import { HOSTS } from './hosts.js';
import { oidcAuthorizeSuite } from './suites/oidc-authorize.js';
import { oidcDiscoverySuite } from './suites/oidc-discovery.js';
import { oidcLogoutSuite } from './suites/oidc-logout.js';
import { oidcTokenSuite } from './suites/oidc-tokens.js';
import { oidcUserInfoSuite } from './suites/oidc-userinfo.js';

for (const host of HOSTS) {
  describe(host.name, () => {
    oidcDiscoverySuite(host);
    oidcAuthorizeSuite(host);
    oidcUserInfoSuite(host);
    oidcTokenSuite(host);
    oidcLogoutSuite(host);
  });
}
