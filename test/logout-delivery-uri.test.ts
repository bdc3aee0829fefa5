/**
 * A delivery checks the back-channel logout URI as registration does, at every attempt, not only its address: an
 * app can come from a host's own AppStore or a registry row written before the checks, and a plain http URI on a
 * public host would carry the logout token in cleartext. The host names resolve through a scripted
 * `node:dns/promises` (the address guard's lookup) to a public address that passes the guard; the connection itself
 * goes to a server of this test on loopback, standing in for that host, so that a token sent shows here.
 */
import { Agent, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';

vi.mock('node:dns/promises', async (original) => (await import('./helpers/scripted-dns.js')).scriptedDns(original));
const { resolved } = await import('./helpers/scripted-dns.js');
const { postLogoutToken } = await import('../src/logout/post-logout-token.js');
const { backchannelLogoutURIProblem } = await import('../src/apps/app-validation.js');

const PUBLIC = [{ address: '93.184.215.14', family: 4 }];
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  resolved.clear();
});

/** A server on loopback, and agents whose every connection goes to it whatever the address checked. */
async function standIn(): Promise<{ received: string[]; agents: never }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(`${request.headers.host} ${body}`);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const wire = new Agent();
  (wire as unknown as { createConnection: unknown }).createConnection = () => connect(port, '127.0.0.1');
  cleanup.push(async () => wire.destroy());
  return { received, agents: { agentFor: () => wire } as never };
}

it('plain http on a public host is refused at the attempt, as registration refuses it, and nothing is sent', async () => {
  const { received, agents } = await standIn();
  resolved.set('app.example.com', PUBLIC);
  const uri = 'http://app.example.com/logout';
  expect(backchannelLogoutURIProblem(uri)).toMatch(/must use https/);
  const outcome = await postLogoutToken(uri, 'eyJ.logout.token', { allowPrivateAddresses: false, agents });
  expect(outcome).toEqual({
    kind: 'refused',
    reason: 'the back-channel logout URI must use https (http is allowed only for loopback hosts)',
  });
  expect(received).toEqual([]);
});

it('a URI registration refuses for its form (userinfo, fragment) is refused too', async () => {
  const { received, agents } = await standIn();
  resolved.set('app.example.com', PUBLIC);
  for (const uri of ['https://user@app.example.com/logout', 'https://app.example.com/logout#frag']) {
    const outcome = await postLogoutToken(uri, 'eyJ.logout.token', { allowPrivateAddresses: false, agents });
    expect(outcome).toEqual({ kind: 'refused', reason: `the back-channel logout URI ${backchannelLogoutURIProblem(uri)}` });
  }
  expect(received).toEqual([]);
});

it('plain http on a loopback host, which registration allows (development), is still posted to', async () => {
  const { received, agents } = await standIn();
  const outcome = await postLogoutToken('http://localhost/logout', 'eyJ.logout.token', { allowPrivateAddresses: true, agents });
  expect(outcome).toEqual({ kind: 'delivered', status: 200 });
  expect(received).toEqual(['localhost logout_token=eyJ.logout.token']);
});
