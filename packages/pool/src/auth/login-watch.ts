import { fileOf, loginDirectory, readAuthRecord } from "./store";

/** How often a login file is looked at while its server waits for a login. */
const LOGIN_WATCH_INTERVAL_MS = 1000;

export interface LoginWatchOptions {
  server: string;
  env: NodeJS.ProcessEnv;
  /** The principal whose own login a per-principal instance uses; none for the shared login. */
  principal: string | undefined;
  /** Called once, when the file holds tokens it did not hold when the watch began (`codemux auth login` finished). */
  onLogin: () => void;
}

/**
 * Watches the login file of a server that needs a login, so that a login made meanwhile (in another process) is
 * picked up without a call to it: the file is looked at each second (`watchFile` notices one that does not exist yet),
 * and `onLogin` runs once new tokens are in it. Resolves with what stops the watch.
 */
export async function watchLogin(options: LoginWatchOptions): Promise<() => void> {
  const { watchFile, unwatchFile } = await import("node:fs");
  const dir = await loginDirectory(options.env, options.principal);
  const file = fileOf(dir, options.server);
  const tokenOf = async () => (await readAuthRecord(dir, options.server).catch(() => undefined))?.tokens?.access_token;
  const before = await tokenOf();
  let stopped = false;
  const stop = () => {
    stopped = true;
    unwatchFile(file, onChange);
  };
  // A login writes the file several times (the client, the discovery, the tokens): only new tokens end the wait.
  const onChange = () =>
    void tokenOf().then((token) => {
      if (stopped || token === undefined || token === before) return;
      stop();
      options.onLogin();
    });
  watchFile(file, { interval: LOGIN_WATCH_INTERVAL_MS, persistent: false }, onChange);
  return stop;
}
