/** What the browser brought back to a login: the code, and a way to tell the page how the exchange went. */
export interface LoginCallbackAnswer {
  code: string;
  /** The `iss` parameter (RFC 9207): which authorization server sent the browser back; checked before the code is redeemed. */
  iss?: string;
  /** Called once the code is exchanged and the tokens stored (no argument), or with why that failed. */
  finished(error?: Error): void;
}

/**
 * Where per-principal logins send the browser back instead of a loopback listener on 127.0.0.1: a route on codemux's
 * own public HTTP server, so that a remote principal's browser can finish its login.
 */
export interface LoginCallbacks {
  /** The redirect URI the authorization server sends the browser back to, e.g. `https://codemux.example.com/oauth/callback`. */
  readonly redirectUrl: string;
  /**
   * codemux's own client ID metadata document, which it serves where its public URL is https (naming `redirectUrl`): the
   * client id of these logins where the authorization server takes such documents (SEP-991); elsewhere they register.
   */
  readonly clientMetadataUrl?: string;
  /**
   * Waits for the browser to come back with `state` (unguessable, single use, bound to the login of `principal` to `server`);
   * the wait and the state end when `signal` aborts (the login finished, failed or timed out).
   */
  expect(state: string, login: { server: string; principal: string }, signal: AbortSignal): Promise<LoginCallbackAnswer>;
  /**
   * The link the principal is given in place of the authorization URL of the login `expect` waits for (`state`): a page of
   * codemux's own that the principal's credentials unlock, which binds the browser to the login before sending it on to
   * `authorizationUrl`, so that no one else's browser can finish it.
   */
  startUrl(state: string, authorizationUrl: URL): URL;
}
