/**
 * The OAuth 2.0 black-box suite around the spec: code exchange, refresh, revocation, introspection, metadata and
 * the v1 app token. Runs against every host.
 */
import type { Host } from '../hosts.js';
import { appTokenV1Suite } from './oauth-app-token-v1.js';
import { browserFlowSuite } from './oauth-browser-flow.js';
import { authorizationCodeSuite } from './oauth-code.js';
import { metadataSuite } from './oauth-metadata.js';
import { refreshSuite } from './oauth-refresh.js';
import { revocationSuite } from './oauth-revocation.js';

/** Runs every OAuth suite against `host`. */
export function oauthSuite(host: Host): void {
  authorizationCodeSuite(host);
  refreshSuite(host);
  revocationSuite(host);
  metadataSuite(host);
  appTokenV1Suite(host);
  browserFlowSuite(host);
}
