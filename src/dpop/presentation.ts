/**
 * How an access token was presented, on its own: the verifier's contract (`guard/verifier-contract.ts`) names it, and
 * may not import the binding check (`resource.ts`, which imports the request context).
 */

/**
 * How an access token was presented (RFC 9449 §7.1), for the binding check (`VerifyAccessTokenOptions.dpop`).
 * @example const presentation: DPoPPresentation = { scheme: 'DPoP', proof: headers.dpop, method: 'GET', url: 'https://api.example.com/x' };
 */
export interface DPoPPresentation {
  /** The `Authorization` scheme the token came with. */
  scheme: 'Bearer' | 'DPoP';
  /** The `DPoP` header, if any. */
  proof?: string | undefined;
  /** The HTTP method of the request. */
  method: string;
  /** The absolute URL of the request as the client addressed it. */
  url: string;
}
