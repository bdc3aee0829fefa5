import { describe } from 'vitest';
import { HOSTS } from './hosts.js';
import { oauthSuite } from './suites/oauth.js';

for (const host of HOSTS) describe(host.name, () => oauthSuite(host));
