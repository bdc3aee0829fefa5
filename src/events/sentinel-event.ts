/**
 * Audit events handed to the `onEvent` option. They name who and what, never a secret: no client secret,
 * password, code, session id, refresh or access token ever appears in an event.
 */

/** Fields every event carries. */
interface EventBase {
  /** Milliseconds since the epoch. */
  at: number;
  accountId: string;
  clientId?: string | undefined;
  /** Client address (a trusted proxy's `X-Forwarded-For` under `trustProxy`), when known. */
  ip?: string | undefined;
  /** Ties the event to spans and host logs: the `traceparent` trace id, else `X-Request-Id`, else the span's trace id. */
  requestId?: string | undefined;
  /** Whether the service did what was asked (`success`) or refused it (`failure`). */
  outcome: 'success' | 'failure';
}

/**
 * How the user of a sign-in, session or user token authenticated (step-up): the `acr` level and the RFC 8176 `amr`
 * methods, names of methods only, never a credential.
 */
interface AssuranceFields {
  acr?: string | undefined;
  amr?: string[] | undefined;
}

/**
 * Something the service did or refused, for audit logs and metrics, including the attacks worth alerting on: a
 * replayed code (RFC 6749 §4.1.2), a reused refresh token (RFC 9700 §4.14.2), throttled logins. Never a secret.
 *
 * @example
 * createSentinel({ ...options, onEvent: (event) => { if (event.type === 'refresh.reused') alert(event.accountId, event.clientId); } });
 */
export type SentinelEvent =
  | (EventBase &
      AssuranceFields & {
        type: 'token.issued';
        grantType: string;
        consumerId?: string | undefined;
        userId?: string | undefined;
        jti: string;
      })
  | (EventBase & { type: 'token.denied'; grantType?: string | undefined; error: string; reason: string })
  | (EventBase & { type: 'token.revoked'; tokenType: 'access_token' | 'refresh_token' })
  | (EventBase & { type: 'code.issued'; userId: string })
  | (EventBase & { type: 'code.replayed'; userId?: string | undefined })
  | (EventBase & { type: 'refresh.reused'; userId?: string | undefined })
  | (EventBase & { type: 'authorize.denied'; error: string; reason: string })
  | (EventBase & AssuranceFields & { type: 'login.succeeded'; userId: string; username?: string | undefined })
  // Failed attempts carry a keyed digest of the normalized username, never the typed text (it is sometimes a password;
  // authorize/state/identifier-digest.ts).
  | (EventBase & { type: 'login.failed'; usernameDigest: string; reason: string })
  | (EventBase & { type: 'login.throttled'; usernameDigest: string; scope: 'username' | 'ip' })
  | (EventBase & AssuranceFields & { type: 'session.created'; userId: string })
  | (EventBase & { type: 'session.ended'; userId?: string | undefined; reason: string })
  // Registry changes (RFC 7591 registration, RFC 7592 management, registerApp()): who changed which app, never a
  // secret, a hash or a token. `actor` is the one the registry's change log records.
  | (EventBase & { type: 'app.registered'; clientId: string; actor: string })
  | (EventBase & { type: 'app.updated'; clientId: string; actor: string; changed: string[] })
  | (EventBase & { type: 'app.deleted'; clientId: string; actor: string })
  | (EventBase & { type: 'app.secret_rotated'; clientId: string; actor: string; overlapSeconds: number })
  // A wrong initial access token (RFC 7591 §3) or registration access token (RFC 7592 §1), and the throttle that
  // stops a caller guessing them; the presented token is never in the event.
  | (EventBase & { type: 'registration.denied'; reason: string })
  // `scope`: `ip` for wrong tokens (throttle.maxFailuresPerIp), `registrations` for the address's or its IPv6 /48's
  // share of successful registrations (registration.registrationsPerAddress, registrationsPerNetwork), or a client's
  // share of changes to its registration (CHANGES_PER_CLIENT; the event then names the client).
  | (EventBase & { type: 'registration.throttled'; scope: 'ip' | 'registrations' })
  // Sessions and back-channel logout (OpenID Connect Back-Channel Logout 1.0): a user's grants with one app ended
  // ("disconnect this app"), and the fate of each logout token — the app and the attempt count, never the token.
  | (EventBase & { type: 'grants.revoked'; clientId: string; userId: string; count: number })
  // One grant ended by the service itself: `session-app-limit`, the oldest of an app's grants in one device session
  // once a new one passed `session.maxGrantsPerApp`; `session-apps-limit`, a grant of the app used least recently in
  // one device session once a new app passed `session.maxAppsPerSession`; `revocations-limit`, a grant with more revoked, unexpired
  // access tokens than it keeps (token/grant-records.ts MAX_REVOKED_ACCESS_TOKENS); `user-gone`, a refresh, code or
  // device code of a user the `users.claims` hook says no longer exists (with `idTokenClaims` or ID token claims a
  // `claims` parameter named; token/user-tokens.ts), or a UserInfo call with an access token of such a user
  // (userinfo/userinfo.ts).
  | (EventBase & {
      type: 'grant.ended';
      clientId: string;
      userId: string;
      reason: 'session-app-limit' | 'session-apps-limit' | 'revocations-limit' | 'user-gone';
    })
  | (EventBase & { type: 'logout.delivered'; clientId: string; userId: string; attempts: number })
  | (EventBase & { type: 'logout.failed'; clientId: string; userId: string; attempts: number; reason: string })
  // The operator console (`sentinel-idp/console`): who signed in, what they changed and what was refused, naming
  // the operator (the user id the service signed in) and the target (a client id or kid, never a secret).
  | (EventBase & { type: 'console.signed_in'; operator: string; role: 'admin' | 'viewer' })
  | (EventBase & { type: 'console.changed'; operator: string; action: string; target?: string | undefined })
  | (EventBase & {
      type: 'console.denied';
      operator?: string | undefined;
      action: string;
      reason: string;
      /** The client id, kid or user the refused request aimed at, when it named one. */
      target?: string | undefined;
    })
  // The device authorization grant (RFC 8628): codes handed to a device, and the person's decision on the page.
  | (EventBase & { type: 'device.authorized'; clientId: string })
  | (EventBase & { type: 'device.approved'; userId: string })
  | (EventBase & { type: 'device.denied'; userId?: string | undefined })
  // The account page (issue #35): a user's own changes, and its refused posts (a stale or forged form).
  | (EventBase & { type: 'passkey.added'; userId: string })
  | (EventBase & { type: 'passkey.removed'; userId: string })
  | (EventBase & { type: 'account.denied'; userId?: string | undefined; reason: string })
  // Token exchange (RFC 8693) and the JWT bearer grant (RFC 7523): the trusted issuer that proved the consumer, or
  // the actor a delegation adds; `subject` is the issued token's `sub`. Never the presented or issued tokens.
  | (EventBase & {
      type: 'token.exchanged';
      grantType: string;
      subject: string;
      issuer?: string | undefined;
      consumerId?: string | undefined;
      actor?: string | undefined;
      jti: string;
    });

/**
 * The `type` of every event (see {@link SentinelEvent}; `code.replayed` is RFC 6749 §4.1.2, `refresh.reused` RFC 9700 §4.14.2).
 *
 * @example
 * const counted: SentinelEventType[] = ['token.issued', 'token.denied', 'login.failed'];
 */
export type SentinelEventType = SentinelEvent['type'];

/**
 * What an emitter gives: the event without the fields the one audit-event helper fills in from the request (time,
 * client address, request id, outcome). Distributes `Omit` over the union so each variant keeps its own fields.
 */
export type EventInput = SentinelEvent extends infer E
  ? E extends SentinelEvent
    ? Omit<E, 'at' | 'ip' | 'requestId' | 'outcome'>
    : never
  : never;
