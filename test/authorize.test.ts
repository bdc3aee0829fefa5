import { describe } from 'vitest';
import { HOSTS } from './hosts.js';
import { authorizeSuite } from './suites/authorize.js';

for (const host of HOSTS) describe(host.name, () => authorizeSuite(host));
