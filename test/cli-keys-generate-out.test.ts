/**
 * `sentinel-idp keys generate --out <file>`: the private key goes to a new file only its owner can read, created so
 * (never readable by others in between), and never over an existing file. The shell's `>` that the help showed
 * before made the file with the umask's mode: readable by every local user under the usual 022.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { runKeysGenerate } from '../src/cli/keys-generate.js';
import { capturedIO } from './helpers/cli-io.js';

const directory = mkdtempSync(join(tmpdir(), 'sentinel-keys-generate-'));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('keys generate --out', () => {
  it('writes the private JWK to a new file of mode 600 and prints no key', async () => {
    const path = join(directory, 'signing-key.json');
    const io = capturedIO();
    expect(await runKeysGenerate(['--alg', 'EdDSA', '--out', path], io)).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const jwk = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect(typeof jwk.d).toBe('string');
    expect(io.out).toBe('');
    expect(io.err).not.toContain(jwk.d);
  });

  it('refuses an existing file, leaving it as it was, and exits 1', async () => {
    const path = join(directory, 'existing.json');
    writeFileSync(path, 'the key in use\n', { mode: 0o644 });
    const io = capturedIO();
    expect(await main(['keys', 'generate', '--out', path], io)).toBe(1);
    expect(io.err).toMatch(/exists already/);
    expect(io.out).toBe('');
    expect(readFileSync(path, 'utf8')).toBe('the key in use\n');
  });

  it('says which file it cannot create, without a stack', async () => {
    const io = capturedIO();
    expect(await main(['keys', 'generate', '--out', join(directory, 'missing', 'key.json')], io)).toBe(1);
    expect(io.err).toMatch(/^sentinel-idp: cannot create .*key\.json \(ENOENT\)\n$/);
  });
});
