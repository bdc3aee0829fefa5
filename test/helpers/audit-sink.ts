/**
 * An audit sink any suite can wire into a sentinel: it collects every `onEvent` event, every `logger.warn` line
 * and every `onError` report, remembers every secret value the suite used or was handed (client secrets,
 * passwords, codes, tokens, session ids, CSRF tokens), and finds any secret that leaked into what it collected.
 *
 * Why a registry of secrets rather than a pattern scan: a leaked code looks like any other base64url string; only
 * knowing the exact values makes "never a secret in an event or a log line" a test that can fail.
 *
 * @example
 * const sink = createAuditSink();
 * const sentinel = makeSentinel(sink.options());
 * sink.secret(CLIENT_SECRET, PASSWORD);
 * // … run flows, registering every code and token received with sink.secret(…)
 * expect(sink.leaks()).toEqual([]);
 */
import type { SentinelEvent, SentinelOptions } from '../../src/index.js';

/** A secret found where it must never appear. */
export interface AuditLeak {
  /** Where: `event:<type>`, `log`, or `error`. */
  where: string;
  /** What kind of secret (from the label given to `secret()`), never the value itself. */
  secret: string;
  /** The offending line, with the secret masked. */
  line: string;
}

/** Collected output and the secrets to look for. */
export interface AuditSink {
  readonly events: SentinelEvent[];
  readonly logs: string[];
  readonly errors: string[];
  /** Options that route `onEvent`, `logger` and `onError` into this sink. */
  options(): Pick<SentinelOptions, 'onEvent' | 'logger' | 'onError'>;
  /** Registers values that must never appear in events, logs or error reports. Empty and short values are ignored. */
  secret(...values: Array<string | null | undefined>): void;
  /** Registers values under a label (shown in leak reports instead of the value). */
  labelled(label: string, ...values: Array<string | null | undefined>): void;
  /** How many distinct secret values are registered. */
  readonly secretCount: number;
  /** Every collected line containing a registered secret. */
  leaks(): AuditLeak[];
}

/** Shorter values would match by accident (e.g. a 3-letter password inside a word). */
const MIN_SECRET_LENGTH = 8;

function render(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ''}`;
  try {
    return typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** Also looks for the encodings a secret most often leaks in: URL-encoded and base64url. */
function variants(value: string): string[] {
  const forms = new Set([value, encodeURIComponent(value), Buffer.from(value).toString('base64url')]);
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/**
 * Creates an empty sink.
 *
 * @example
 * const sink = createAuditSink();
 * createSentinel({ ...options, ...sink.options() });
 */
export function createAuditSink(): AuditSink {
  const events: SentinelEvent[] = [];
  const logs: string[] = [];
  const errors: string[] = [];
  const secrets = new Map<string, string>();

  const labelled = (label: string, ...values: Array<string | null | undefined>): void => {
    for (const value of values) {
      if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) secrets.set(value, label);
    }
  };

  return {
    events,
    logs,
    errors,
    options: () => ({
      onEvent: (event: SentinelEvent) => {
        events.push(event);
      },
      logger: { warn: (message: string) => logs.push(render(message)) },
      onError: (error: unknown) => {
        errors.push(render(error));
      },
    }),
    secret: (...values) => labelled('secret', ...values),
    labelled,
    get secretCount() {
      return secrets.size;
    },
    leaks() {
      const lines = [
        ...events.map((event) => ({ where: `event:${event.type}`, line: render(event) })),
        ...logs.map((line) => ({ where: 'log', line })),
        ...errors.map((line) => ({ where: 'error', line })),
      ];
      const found: AuditLeak[] = [];
      for (const { where, line } of lines) {
        for (const [value, label] of secrets) {
          const hit = variants(value).find((form) => line.includes(form));
          if (hit !== undefined) found.push({ where, secret: label, line: line.split(hit).join(`«${label}»`) });
        }
      }
      return found;
    },
  };
}
