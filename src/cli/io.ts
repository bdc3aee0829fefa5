/**
 * What a CLI command may touch of the outside world, passed in so that commands stay plain functions.
 */

/** The streams, environment and secret prompt of one CLI run. */
export interface CLIIO {
  /** Results: JSON a script can pipe on. */
  stdout(text: string): void;
  /** Messages for the person at the terminal. */
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Reads a secret without echoing it; `null` when there is no terminal to ask. */
  readSecret(prompt: string): Promise<string | null>;
}
