/**
 * `sentinel-idp keys generate [--alg ES256|EdDSA|RS256]`: prints a new private JWK (RFC 7517) for the `keys` option.
 */
import { generatePrivateJWK, type SigningAlgorithm } from '../keys/signing-keys.js';
import type { CLIIO } from './io.js';
import { optionalString, parseArguments, UsageError } from './usage.js';

const COMMAND = 'keys generate';
const ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'EdDSA', 'RS256', 'ES384', 'PS256'];

/** Help text of `keys generate`. */
export const KEYS_GENERATE_HELP = `Usage: sentinel-idp keys generate [--alg ES256|EdDSA|RS256|ES384|PS256]

Prints a new private signing key as a JSON Web Key (RFC 7517) on stdout, with a
"kid" (its RFC 7638 thumbprint) and "alg". Pass it to createSentinel({ keys: [jwk] }).

Options:
  --alg <alg>   signing algorithm (default ES256)
  -h, --help    show this help

The output is a private key: store it like a password (a secret manager or an
environment variable), never in source control.

Example:
  sentinel-idp keys generate --alg EdDSA > signing-key.json
`;

/**
 * Runs `keys generate`; returns the exit code.
 *
 * @example
 * await runKeysGenerate(['--alg', 'EdDSA'], io); // prints {"kty":"OKP","crv":"Ed25519",…}
 */
export async function runKeysGenerate(argv: readonly string[], io: CLIIO): Promise<number> {
  const values = parseArguments(argv, { alg: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, COMMAND);
  if (values.help === true) {
    io.stdout(KEYS_GENERATE_HELP);
    return 0;
  }
  const alg = optionalString(values, 'alg', COMMAND) ?? 'ES256';
  if (!ALGORITHMS.includes(alg as SigningAlgorithm)) {
    throw new UsageError(`--alg must be one of ${ALGORITHMS.join(', ')}`, COMMAND);
  }
  io.stdout(`${JSON.stringify(generatePrivateJWK(alg as SigningAlgorithm), null, 2)}\n`);
  return 0;
}
