/**
 * The close-while-signing scenario of the PKCS#11 test, in a process of its own so that a crash (SIGSEGV) fails the
 * test instead of killing the test runner. Each round opens an RSA signer on the token given in the environment,
 * starts 40 signatures on its 4 sessions, closes it while they run, then tries one more signature; it prints one
 * JSON line per round: how each signature ended and whether `close()` resolved.
 */
import { pkcs11Signer } from '../../src/keys/signers/pkcs11.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const outcome = (signing: Promise<Uint8Array>): Promise<string> =>
  signing.then(
    () => 'signed',
    (error: unknown) => `rejected: ${(error as Error).message}`,
  );

for (let round = 0; round < Number(env('ROUNDS')); round += 1) {
  const signer = pkcs11Signer({
    library: env('LIBRARY'),
    tokenLabel: env('TOKEN_LABEL'),
    pin: env('PIN'),
    keyLabel: env('KEY_LABEL'),
    sessions: 4,
  });
  const inFlight = Array.from({ length: 40 }, (_, index) => outcome(signer.sign(Buffer.from(`payload ${index}`))));
  await new Promise((resolve) => setImmediate(resolve)); // the first four C_Sign now run on the thread pool
  const closing = signer.close();
  const later = await outcome(signer.sign(Buffer.from('after close')));
  await closing;
  console.log(JSON.stringify({ inFlight: await Promise.all(inFlight), later, closed: true }));
}
