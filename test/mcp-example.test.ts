/**
 * The MCP example (`npm run example:mcp`) as a test: the official MCP SDK's client and server complete the
 * authorization against the service in Express, Koa, Fastify and a fetch runtime, for a pre-registered public app, a
 * client ID metadata document (https on loopback, a throwaway certificate trusted by the example's process only) and
 * RFC 7591 registration, call the tool, and see their token refused by another resource's guard.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm run example:mcp', () => {
  it('completes every flow in every framework, and another resource refuses the token', () => {
    const result = spawnSync('npm', ['run', '--silent', 'example:mcp'], { encoding: 'utf8', timeout: 240_000 });
    const lines = result.stdout.trim().split('\n');
    for (const framework of ['express', 'koa', 'fastify', 'fetch']) {
      for (const mode of ['pre-registered public app', 'client ID metadata document', 'RFC 7591 registration']) {
        const said = lines.filter((line) => line.startsWith(`${framework} ${mode}: `));
        expect(said, `${framework} ${mode}\n${result.stdout}\n${result.stderr}`).toHaveLength(2);
        expect(said[0]).toMatch(/: OK whoami says user u-demo, client .+, aud http:\/\/127\.0\.0\.1:\d+\/mcp$/);
        expect(said[1]).toMatch(
          /: OK another resource answers 401 Bearer realm="sentinel", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/billing-mcp", error="invalid_token"$/,
        );
      }
    }
    expect(lines.filter((line) => line.includes('client ID metadata document: OK whoami'))[0]).toMatch(
      /client https:\/\/127\.0\.0\.1:\d+\/agent\/client\.json,/,
    );
    expect(lines.at(-1)).toBe('mcp example: all flows completed');
    expect(result.status).toBe(0);
  }, 300_000);
});
