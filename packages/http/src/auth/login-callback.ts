import { refusalOf, sendLoginPage, type LoginCallbackAnswer, type LoginCallbacks } from "@codemux/pool";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "../errors";

/** Where per-principal logins send the browser back to, on codemux's own public URL. */
export const LOGIN_CALLBACK_PATH = "/oauth/callback";
/** The longest request target the route reads: a code and a state are far shorter. */
const MAX_TARGET_CHARS = 4096;

interface PendingLogin {
  server: string;
  principal: string;
  /** Hands the code (and the `iss` that came with it) to the login; resolves once it is exchanged and stored (undefined) or with why not. */
  accept(code: string, iss: string | undefined): Promise<Error | undefined>;
  refuse(reason: string): void;
}

/**
 * `GET /oauth/callback?code=…&state=…`: the browser of a principal's downstream login comes back here (with
 * `http.publicUrl` set) instead of to a loopback listener only the codemux host could reach. It needs no bearer
 * token (a browser navigates to it), so it does nothing but for a known state: unguessable, single use, bound to
 * the login (server and principal) that made it, and gone when that login ends or times out.
 */
export class LoginCallbackRoute implements LoginCallbacks {
  readonly redirectUrl: string;
  readonly #pending = new Map<string, PendingLogin>();

  constructor(publicUrl: string) {
    this.redirectUrl = `${publicUrl}${LOGIN_CALLBACK_PATH}`;
  }

  expect(state: string, login: { server: string; principal: string }, signal: AbortSignal): Promise<LoginCallbackAnswer> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Error("The login was cancelled."));
      let settle: ((error?: Error) => void) | undefined;
      const outcome = new Promise<Error | undefined>((done) => {
        settle = done;
      });
      signal.addEventListener(
        "abort",
        () => {
          this.#pending.delete(state);
          settle?.(new Error("the login ended before the code was exchanged"));
          reject(new Error("The login was cancelled."));
        },
        { once: true },
      );
      this.#pending.set(state, {
        ...login,
        accept: (code, iss) => {
          resolve({ code, ...(iss === undefined ? {} : { iss }), finished: (error) => settle?.(error) });
          return outcome;
        },
        refuse: (reason) => reject(new Error(`The authorization server refused the login of "${login.server}": ${reason}.`)),
      });
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    if (req.method !== "GET") throw new HttpError("METHOD_NOT_ALLOWED", "Use GET on this path.", { headers: { allow: "GET" } });
    if ((req.url ?? "").length > MAX_TARGET_CHARS)
      return sendLoginPage(res, {
        status: 414,
        title: "Login failed",
        text: `The login answer is longer than ${MAX_TARGET_CHARS} characters, so codemux did not read it; call the tool again for a new login link.`,
      });
    const state = query.get("state") ?? "";
    const login = this.#pending.get(state);
    if (!login)
      return sendLoginPage(res, {
        status: 400,
        title: "Login failed",
        text: "This login answer is unknown, expired or already used; call the tool again for a new login link and open it within 5 minutes.",
      });
    // Single use: a replayed answer finds nothing, whatever becomes of this one.
    this.#pending.delete(state);
    const reason = refusalOf(query);
    if (reason !== undefined) {
      login.refuse(reason);
      return sendLoginPage(res, {
        status: 400,
        title: "Login failed",
        text: `The authorization server of ${login.server} refused the login: ${reason}. Call the tool again for a new login link.`,
      });
    }
    const failure = await login.accept(query.get("code") as string, query.get("iss") ?? undefined);
    if (failure)
      return sendLoginPage(res, {
        status: 502,
        title: "Login failed",
        text: `codemux could not finish the login to ${login.server}: ${failure.message}. Call the tool again for a new login link.`,
      });
    sendLoginPage(res, { status: 200, title: "Logged in", text: `Logged in to ${login.server}; you can close this tab.` });
  }
}
