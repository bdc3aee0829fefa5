/**
 * A throwaway certificate for 127.0.0.1 (made with the openssl command, valid one day), for the tests that serve
 * https on loopback (client ID metadata documents must be https URLs, and the MCP SDK refuses any other) and for
 * bench/logout-delivery.ts `--https`. The certificate is its own trust anchor; nothing is written outside a fresh temporary directory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key and certificate (PEM) for https://127.0.0.1, and the file the certificate is in (for NODE_EXTRA_CA_CERTS). */
export interface LoopbackTLS {
  key: string;
  cert: string;
  certFile: string;
}

/** Makes a fresh P-256 key and self-signed certificate for IP 127.0.0.1. */
export function loopbackTLS(): LoopbackTLS {
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}
