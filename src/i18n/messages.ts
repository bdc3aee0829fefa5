/**
 * The message catalogue of the service's pages: every word a person reads on the login, second-factor, passkey,
 * error, throttled and signed-out pages comes from one of these, so a language is one object and a host can add
 * or override one without touching the page code.
 *
 * `{name}` marks a value the page fills in (already escaped by the page); nothing else is interpreted.
 */

/**
 * Every string of the built-in pages, in one language (named by an RFC 5646 tag).
 *
 * @example
 * const messages: Messages = { ...en, signIn: 'Log in' };
 */
export interface Messages {
  /** Page title and heading of the login page. */
  signInTitle: string;
  /** Under the heading; `{app}` is the application's name. */
  continueTo: string;
  username: string;
  password: string;
  signIn: string;
  cancel: string;
  /** `{account}` is the account id. */
  account: string;
  wrongCredentials: string;
  missingCredentials: string;
  tooManyAttempts: string;
  linkExpired: string;
  formOutOfDate: string;
  /** The login page when other browsers opened the same sign-in link at the same moment (503, `Retry-After`). */
  loginPageBusy: string;
  postedFromAnotherSite: string;
  /** Separates the password form from the passkey button. */
  or: string;
  passkeySignIn: string;
  passkeyFailed: string;
  /** The login page when only a passkey reaches the level the application asked for (step-up, `acr_values`). */
  stepUpPasskey: string;
  passkeyOfferTitle: string;
  passkeyOfferLead: string;
  passkeyAdd: string;
  passkeySkip: string;
  passkeyNotAdded: string;
  /** A passkey whose credential id some user of the account already has (WebAuthn §7.1 step 26). */
  passkeyAlreadyRegistered: string;
  totpTitle: string;
  totpLead: string;
  totpLabel: string;
  totpVerify: string;
  totpWrong: string;
  totpMissing: string;
  recoveryToggle: string;
  recoveryLabel: string;
  recoveryUse: string;
  errorBadRequest: string;
  errorUnknown: string;
  errorRefused: string;
  errorMethod: string;
  errorTooLarge: string;
  errorTooLong: string;
  errorTooManyAttempts: string;
  errorServer: string;
  /** `{code}` is the OAuth error code. */
  errorCode: string;
  /** Shown on an error page when the cause has no translation: the cause follows in English. */
  errorDetails: string;
  /** Above the cause on the error page of an app's request that is not sent back to it; `{host}` names the app. */
  errorAppRequest: string;
  /** The link back to the app on that page; `{host}` is where it goes. */
  errorReturnToApp: string;
  signedOutTitle: string;
  signedOutHeading: string;
  signedOutLead: string;
  logoutConfirmTitle: string;
  /** `{app}` is the requesting application's name (shown when known). */
  logoutConfirmAsks: string;
  /** `{product}` is the branding's product name. */
  logoutConfirmLead: string;
  logoutConfirm: string;
  logoutConfirmMeta: string;
  // The device flow's verification pages (RFC 8628).
  deviceTitle: string;
  deviceLead: string;
  deviceCodeLabel: string;
  deviceContinue: string;
  deviceCodeWrong: string;
  deviceCodeUsed: string;
  deviceConfirmExpired: string;
  deviceTooManyCodes: string;
  /** The confirmation page when the device's own polls kept changing its authorization at that moment (503). */
  deviceDecisionBusy: string;
  deviceConfirmTitle: string;
  /** `{app}` is the device's application name. */
  deviceConfirmAsks: string;
  /** `{code}` is the user code, as the device shows it. */
  deviceConfirmCode: string;
  deviceAllow: string;
  deviceDeny: string;
  deviceConfirmMeta: string;
  /**
   * On the confirmation page, who is signed in: `{user}` is the `name` claim when the claims hook gives one, else the
   * user id. A person at a shared computer sees whose account the device would get before allowing it.
   */
  deviceSignedInAs: string;
  /** The confirmation page's button that signs in as another user for the same device code. */
  deviceSwitchUser: string;
  deviceApprovedTitle: string;
  deviceApprovedLead: string;
  deviceDeniedTitle: string;
  deviceDeniedLead: string;
  // The account page (issue #35).
  /** Title and heading of the account page; also the name on the login page when signing in to it. */
  accountTitle: string;
  /** Under the heading; `{user}` is the signed-in user's id. */
  accountLead: string;
  accountSessionsHeading: string;
  /** Marks the session of the browser showing the page. */
  accountSessionThisDevice: string;
  /** `{time}` is when the user signed in. */
  accountSessionSince: string;
  /** `{apps}` lists the apps signed in through the session. */
  accountSessionApps: string;
  accountSessionEnd: string;
  accountSessionsEndOthers: string;
  accountPasskeysHeading: string;
  accountPasskeysNone: string;
  /** `{time}` is when the passkey was added. */
  accountPasskeyAdded: string;
  accountPasskeyRemove: string;
  /** `{id}` is the start of the credential id. */
  accountPasskeyLabel: string;
  accountAppsHeading: string;
  accountAppsNone: string;
  /** `{scopes}` lists what the app may use. */
  accountAppScopes: string;
  /** `{time}` is when the user first connected the app. */
  accountAppSince: string;
  accountAppDisconnect: string;
  accountSignOut: string;
  accountNotSignedIn: string;
  accountSessionEnded: string;
  accountOthersEnded: string;
  accountPasskeyRemoved: string;
  accountPasskeyAddedDone: string;
  accountAppDisconnected: string;
  accountFormOutOfDate: string;
  accountPasskeyNotAdded: string;
  accountPasskeyAlreadyRegistered: string;
  /** The account page's refusal of a passkey beyond `passkeys.maxPerUser`, and its line instead of the Add button. */
  accountPasskeyLimit: string;
  /** The account page's link to a stronger sign-in, shown instead of "Add a passkey" when this one is too weak. */
  accountPasskeyStepUp: string;
  /** The same link when the sign-in is strong enough but older than `account.maxSignInAge` (a new sign-in is needed). */
  accountPasskeyReauthenticate: string;
  /**
   * Shown by the account page's script when the service refuses to start adding a passkey (the sign-in grew older than
   * `account.maxSignInAge` while the page was open, or the session ended): reloading shows what to do instead.
   */
  accountPasskeyUnavailable: string;
  /** The account page's refusal of a passkey, session or app that is not the signed-in user's. */
  accountNotYourPasskey: string;
  accountNotYourSession: string;
  accountAppNotConnected: string;
  /** The account page's links between the pages of a list, and where the list is (`{page}`, `{pages}`). */
  accountPrevious: string;
  accountNext: string;
  accountPageOf: string;
}

/** The keys of {@link Messages}, for checks that every catalogue is complete. */
export type MessageKey = keyof Messages;

/**
 * The `{name}` placeholders of a message, sorted and without repeats: a host's translation must keep exactly the
 * English message's, or a page loses what it fills in (the app that asks, on the login and device pages) or shows a
 * `{name}` it does not know.
 *
 * @example
 * placeholdersOf('{app} asks to sign you out of {app}.') // ['{app}']
 */
export function placeholdersOf(message: string): string[] {
  return [...new Set(message.match(/\{[a-z]+\}/g) ?? [])].sort();
}

/**
 * Fills `{name}` placeholders of a message with already-escaped values.
 *
 * @example
 * fill(messages.errorCode, { code: '<code>invalid_request</code>' })
 */
export function fill(message: string, values: Readonly<Record<string, string>>): string {
  return message.replace(/\{([a-z]+)\}/g, (whole, name: string) => values[name] ?? whole);
}
