/**
 * `sentinel-idp keys generate [--alg ES256|EdDSA|RS256] [--out <file>]`: prints (or writes) a new private JWK
 * (RFC 7517) for the `keys` option.
 */
import { writeFile } from 'node:fs/promises';
import { generatePrivateJWK, type SigningAlgorithm } from '../keys/signing-keys.js';
import type { CLIIO } from './io.js';
import { optionalString, parseArguments, UsageError } from './usage.js';

const COMMAND = 'keys generate';
const ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'EdDSA', 'RS256', 'ES384', 'PS256'];

/** Help text of `keys generate`. */
export const KEYS_GENERATE_HELP = `Usage: sentinel-idp keys generate [--alg ES256|EdDSA|RS256|ES384|PS256] [--out <file>]

Prints a new private signing key as a JSON Web Key (RFC 7517) on stdout, with a
"kid" (its RFC 7638 thumbprint) and "alg". Pass it to createSentinel({ keys: [jwk] }).

Options:
  --alg <alg>    signing algorithm (default ES256)
  --out <file>   write the key to a new file that only you can read (mode 600)
                 instead of stdout; an existing file is never written over
  -h, --help     show this help

The output is a private key: store it like a password (a secret manager or an
environment variable), never in source control. A file made by the shell's ">"
is readable by every local user under the usual umask: use --out.

Example:
  sentinel-idp keys generate --alg EdDSA --out signing-key.json
`;

/**
 * Runs `keys generate`; returns the exit code.
 *
 * @example
 * await runKeysGenerate(['--alg', 'EdDSA'], io); // prints {"kty":"OKP","crv":"Ed25519",…}
 */
export async function runKeysGenerate(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parseArguments(argv, { alg: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, COMMAND);
  if (values.help === true) {
    io.stdout(KEYS_GENERATE_HELP);
    return 0;
  }
  const alg = optionalString(values, 'alg', COMMAND) ?? 'ES256';
  if (!ALGORITHMS.includes(alg as SigningAlgorithm)) {
    throw new UsageError(`--alg must be one of ${ALGORITHMS.join(', ')}`, COMMAND);
  }
  const out = optionalString(values, 'out', COMMAND);
  const text = `${JSON.stringify(generatePrivateJWK(alg as SigningAlgorithm), null, 2)}\n`;
  if (out === undefined) {
    io.stdout(text);
    return 0;
  }
  await writeKeyFile(out, text);
  io.stderr(`Wrote the private key to ${out} (readable by you only).\n`);
  return 0;
}

/**
 * Creates `path` readable and writable by its owner only, and writes the key. The mode is given at creation: a file
 * made first and restricted afterwards would be readable by others in between. An existing file is refused rather
 * than replaced: it may hold the key in use, and its own permissions would stay as they are.
 */
async function writeKeyFile(path: string, text: string): Promise<void> {
  try {
    await writeFile(path, text, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EEXIST') throw new Error(`${path} exists already: a key is never written over it (remove it, or choose another file)`);
    throw new Error(`cannot create ${path}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
}
