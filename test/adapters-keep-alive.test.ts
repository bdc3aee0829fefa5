/**
 * An answer without a body (the authorization redirect) keeps the connection usable in every framework: it says
 * `Content-Length: 0`, so a client on a kept-alive connection knows where it ends and sends its next request on the
 * same socket. Koa 2 writes a null body with neither a length nor chunked framing, which leaves the answer open-ended.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT, CLIENT_ID, makeSentinel } from './helpers/fixtures.js';
import { HOSTS, type MountedHost } from './helpers/hosts.js';

let running: MountedHost[] = [];
afterEach(async () => {
  await Promise.all(running.map((host) => host.close()));
  running = [];
});

/** Sends `heads` one after another on one connection (the last closing it) and answers everything read back. */
function pipelined(url: string, heads: string[]): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        heads
          .map((head, index) => `${head}\r\nHost: ${hostname}:${port}\r\n${index === heads.length - 1 ? 'Connection: close\r\n' : ''}\r\n`)
          .join(''),
      );
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(text));
  });
}

describe.each(HOSTS)('$name adapter', (host) => {
  it('answers a redirect with Content-Length: 0 and the next request on the same connection', async () => {
    const mounted = await host.mount(makeSentinel());
    running.push(mounted);
    const authorize = `/sentinel/api/account/${ACCOUNT}/authorize?response_type=code&client_id=${CLIENT_ID}&state=s1`;
    const text = await pipelined(mounted.url, [`GET ${authorize} HTTP/1.1`, 'GET /host/ping HTTP/1.1']);
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1]);
    expect(statuses).toEqual(['302', '200']);
    const redirect = text.slice(0, text.indexOf('\r\n\r\n'));
    expect(redirect).toMatch(/\r\ncontent-length: 0(\r\n|$)/i);
    expect(redirect).not.toMatch(/\r\ntransfer-encoding:/i);
    expect(text).toMatch(/pong$/);
  });
});
