import { describe } from 'vitest';
import { HOSTS } from './hosts.js';
import { appTokenSuite } from './suites/app-token.js';

for (const host of HOSTS) describe(host.name, () => appTokenSuite(host));
