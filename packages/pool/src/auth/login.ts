import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { OAuthSettings } from "../config/types";
import { FileOAuthProvider } from "./provider";
import { readAuthRecord, type AuthRecord } from "./store";

export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60 * 1000;

export interface LoginOptions {
  server: string;
  url: string;
  /** The folder of login files (`authDirectory()`). */
  dir: string;
  settings?: OAuthSettings;
  /** The loopback port of the callback: the entry's `oauth.redirectPort`, else a free one. */
  port?: number;
  /** How long to wait for the browser to come back (default 5 minutes). */
  timeoutMs?: number;
  /** Shows (and may open) the authorization URL. */
  onAuthorizationUrl: (url: URL) => void | Promise<void>;
  /** Called once the callback server listens, with its URL. */
  onListening?: (redirectUrl: string) => void;
  signal?: AbortSignal;
  fetch?: FetchLike;
}

/**
 * Logs in to one server: the SDK discovers the authorization server, registers (or uses the configured client id),
 * builds the PKCE authorization URL with `resource`; the browser comes back to a loopback callback on 127.0.0.1;
 * the code is exchanged and the tokens stored. Resolves with the stored record.
 */
export async function loginServer(options: LoginOptions): Promise<AuthRecord> {
  const { createServer } = await import("node:http");
  const { randomBytes } = await import("node:crypto");
  const state = randomBytes(16).toString("hex");
  let settle: { resolve: (code: string) => void; reject: (error: Error) => void } | undefined;
  const callback = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  callback.catch(() => undefined);

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      page(response, { status: 404, title: "Not found", text: "This is codemux's login callback; nothing else is served here." });
      return;
    }
    const error = url.searchParams.get("error");
    const code = url.searchParams.get("code");
    if (url.searchParams.get("state") !== state) {
      page(response, {
        status: 400,
        title: "Login failed",
        text: "The answer does not belong to this login (its state does not match). Start again with codemux auth login.",
      });
      return;
    }
    if (error || !code) {
      const reason = `${error ?? "no code"}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`;
      page(response, { status: 400, title: "Login failed", text: `The authorization server refused: ${reason}. You can close this tab.` });
      settle?.reject(new Error(`The authorization server refused the login of "${options.server}": ${reason}.`));
      return;
    }
    page(response, { status: 200, title: "Logged in", text: `codemux is logged in to ${options.server}. You can close this tab.` });
    settle?.resolve(code);
  });
  const port = options.port ?? options.settings?.redirectPort ?? 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`Port ${port} on 127.0.0.1 is in use; free it or set another oauth.redirectPort for "${options.server}".`)
          : error,
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  const timer = setTimeout(
    () => settle?.reject(new Error(`No answer from the browser within ${Math.round(timeoutMs / 1000)} s; run codemux auth login ${options.server} again.`)),
    timeoutMs,
  );
  const onAbort = () => settle?.reject(new Error("The login was cancelled."));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const address = server.address();
    const redirectUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : port}/callback`;
    options.onListening?.(redirectUrl);
    const provider = new FileOAuthProvider({
      server: options.server,
      url: options.url,
      dir: options.dir,
      ...(options.settings ? { settings: options.settings } : {}),
      login: { redirectUrl, state, onAuthorizationUrl: options.onAuthorizationUrl },
    });
    await provider.prepareLogin();
    const common = { serverUrl: options.url, ...(options.fetch ? { fetchFn: options.fetch } : {}) };
    const first = await auth(provider, common);
    if (first !== "AUTHORIZED") {
      const code = await callback;
      const second = await auth(provider, { ...common, authorizationCode: code });
      if (second !== "AUTHORIZED") throw new Error(`The authorization server did not accept the login of "${options.server}".`);
    }
    const record = await readAuthRecord(options.dir, options.server);
    if (!record?.tokens) throw new Error(`The login of "${options.server}" finished without tokens.`);
    return record;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function page(response: ServerResponse, { status, title, text }: { status: number; title: string; text: string }): void {
  const html = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  response.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
  response.end(
    `<!doctype html><meta charset="utf-8"><title>codemux: ${html(title)}</title><body style="font-family:sans-serif;margin:3em"><h1>${html(title)}</h1><p>${html(text)}</p></body>`,
  );
}
