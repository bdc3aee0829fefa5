/**
 * The suite-wide audit scan: every sentinel built from `baseOptions()` in any test file sends its events,
 * log lines and error reports to one sink per file (unless the test wires its own hooks). After the file, the sink
 * must hold no fixture secret (client secrets, passwords) and no value shaped like one the service generates: a JWT,
 * or 43 base64url characters (every 256-bit code, session id, refresh token, CSRF token and interaction id).
 *
 * `test/audit.test.ts` proves the sink finds planted leaks; this file makes the whole suite its input.
 */
import { afterAll } from 'vitest';
import { type AuditSink, createAuditSink } from '../helpers/audit-sink.js';
import { CC_ONLY_SECRET, CLIENT_SECRET, OTHER_SECRET, PASSWORD } from '../helpers/fixture-secrets.js';

const SINK = Symbol.for('sentinel-idp.test.suiteAuditSink');
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}/;
const SECRET_SHAPE = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/;

const sink = createAuditSink();
sink.labelled('client secret', CLIENT_SECRET, OTHER_SECRET, CC_ONLY_SECRET, 'code-only-secret');
sink.labelled('password', PASSWORD);
(globalThis as Record<symbol, AuditSink>)[SINK] = sink;

afterAll(() => {
  const lines = [...sink.events.map((event) => JSON.stringify(event)), ...sink.logs, ...sink.errors];
  const shaped = lines.filter((line) => JWT.test(line) || SECRET_SHAPE.test(line));
  const leaks = sink.leaks();
  if (leaks.length > 0 || shaped.length > 0) {
    throw new Error(
      `audit: secrets in events, logs or error reports of this file:\n${[
        ...leaks.map((leak) => `${leak.where}: ${leak.line}`),
        ...shaped.map((line) => `token-shaped value: ${line.replace(JWT, '«jwt»').replace(SECRET_SHAPE, '«secret»')}`),
      ].join('\n')}`,
    );
  }
});
