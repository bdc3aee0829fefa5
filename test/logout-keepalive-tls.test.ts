/**
 * Kept-alive logout connections over https: the connection is pinned to the checked address, the TLS is the URL's
 * host name's. An https server on 127.0.0.1 with a throwaway certificate (the openssl command, test/helpers/
 * loopback-tls.ts) records the server name each handshake asks for; the name resolves through a scripted
 * `node:dns/promises` (the address guard's lookup). The certificate is not one the service trusts, so no token may
 * reach the server: certificate checks stay on with a pooled agent.
 */
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { expect, it, vi } from 'vitest';
import { loopbackTLS } from './helpers/loopback-tls.js';

vi.mock('node:dns/promises', async (original) => (await import('./helpers/scripted-dns.js')).scriptedDns(original));
const { resolved } = await import('./helpers/scripted-dns.js');

const { LogoutAgents } = await import('../src/logout/logout-agents.js');
const { postLogoutToken } = await import('../src/logout/post-logout-token.js');

it('the handshake names the URL host, not the pinned address, and an untrusted certificate is refused', async () => {
  const { key, cert } = loopbackTLS();
  const serverNames: string[] = [];
  let requests = 0;
  const server = createServer(
    {
      key,
      cert,
      SNICallback: (name, callback) => {
        serverNames.push(name);
        callback(null, createSecureContext({ key, cert }));
      },
    },
    (_request, response) => {
      requests += 1;
      response.writeHead(200).end();
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const agents = new LogoutAgents();
  try {
    const name = 'logout.tls.test';
    resolved.set(name, [{ address: '127.0.0.1', family: 4 }]);
    const uri = `https://${name}:${(server.address() as AddressInfo).port}/logout`;
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(await postLogoutToken(uri, 'token', { allowPrivateAddresses: true, agents })).toEqual({
        kind: 'retry',
        reason: 'the app could not be reached',
      });
    }
    expect(serverNames).toEqual([name, name]);
    expect(requests).toBe(0);
  } finally {
    agents.close();
    server.closeAllConnections();
    server.close();
  }
});
