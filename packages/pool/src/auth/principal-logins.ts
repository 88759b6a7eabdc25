import type { Logger } from "@codemux/core";
import type { OAuthSettings } from "../config/types";
import { PoolError } from "../errors";
import { DEFAULT_LOGIN_TIMEOUT_MS, loginServer } from "./login";
import type { LoginCallbacks } from "./login-callbacks";
import { authDirectory, principalAuthDirectory } from "./store";

export interface PrincipalLoginsOptions {
  server: string;
  url: string;
  settings?: OAuthSettings | undefined;
  /** Logins in progress at once, at most (each holds a loopback listener until it ends or times out). */
  limit: number;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** codemux's public callback route, when it serves over HTTP with a public URL; else each login listens on the loopback. */
  callbacks?: () => LoginCallbacks | undefined;
}

/**
 * The OAuth logins of one server with per-principal credentials, each started for a principal that
 * called it without a login of its own: the authorization URL goes back to that principal (in the
 * error of its call), and the tokens to its own folder (`principalAuthDirectory`), never the shared one.
 */
export class PrincipalLogins {
  readonly #pending = new Map<string, Promise<URL>>();
  readonly #abort = new AbortController();

  constructor(readonly options: PrincipalLoginsOptions) {}

  /** The authorization URL of `principal`'s login, starting one unless it has one in progress. */
  start(principal: string): Promise<URL> {
    const known = this.#pending.get(principal);
    if (known) return known;
    const { server, url, settings, env, logger, callbacks } = this.options;
    const registry = callbacks?.();
    // A fixed loopback port takes one login at a time; codemux's public route takes as many as the limit.
    const limit = registry === undefined && settings?.redirectPort ? 1 : this.options.limit;
    if (this.#abort.signal.aborted || this.#pending.size >= limit)
      return Promise.reject(
        new PoolError("SERVER_UNAVAILABLE", `Server "${server}" has ${limit} logins in progress already; try again once one has ended (within 5 minutes).`, {
          data: { server, sent: false, transient: false },
        }),
      );
    let shown: { resolve: (url: URL) => void; reject: (error: unknown) => void } | undefined;
    const authorizationUrl = new Promise<URL>((resolve, reject) => {
      shown = { resolve, reject };
    });
    this.#pending.set(principal, authorizationUrl);
    const login = async () =>
      loginServer({
        server,
        url,
        dir: principalAuthDirectory(await authDirectory(env), principal),
        ...(settings ? { settings } : {}),
        timeoutMs: DEFAULT_LOGIN_TIMEOUT_MS,
        signal: this.#abort.signal,
        ...(registry ? { callbacks: { registry, principal } } : {}),
        onAuthorizationUrl: (address) => shown?.resolve(address),
      });
    login()
      .then(
        () => logger.info(`[${server}] ${principal} logged in`),
        (error: unknown) => {
          shown?.reject(error);
          logger.warn(`[${server}] the login of ${principal} did not finish: ${(error as Error).message}`);
        },
      )
      .finally(() => this.#pending.delete(principal));
    return authorizationUrl;
  }

  /** Ends every login in progress (shutdown). */
  close(): void {
    this.#abort.abort();
  }
}
