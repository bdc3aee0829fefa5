/* Minimal declarations for the bench-only dependencies that ship no types (autocannon 9, oidc-provider 9). */

declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest | null | undefined;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
  }
  export interface Histogram {
    total: number;
    p50: number;
    p99: number;
  }
  export interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: AutocannonRequest[];
  }
  export interface AutocannonResult {
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram;
  }
  export interface Instance extends PromiseLike<AutocannonResult> {
    stop(): void;
  }
  export default function autocannon(options: AutocannonOptions): Instance;
}

declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }
  export interface InteractionDetails {
    prompt: { name: string };
    params: Record<string, unknown> & { client_id: string };
    session?: { accountId?: string };
    grantId?: string;
  }
  export class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    callback(): RequestListener;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: { new (input: { accountId: string; clientId: string }): Grant; find(id: string): Promise<Grant | undefined> };
  }
  export default Provider;
}
