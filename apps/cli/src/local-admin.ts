import { isPrincipalId, type Logger } from "@codemux/core";
import type { CodemuxAdmin, ForgetReport } from "@codemux/server";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, readdir, rm, stat } from "node:fs/promises";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { isAlive, processIdentity, runDir } from "./commands/daemon";

/**
 * What every running `codemux serve --http` writes about itself in the run folder (`instance-<key>.json`,
 * 0600 in a 0700 folder): where it serves, and its admin socket, through which commands run by the same
 * user on this machine (`codemux forget`) reach it without a token. Never a token.
 */
export interface LocalInstance {
  pid: number;
  url: string;
  /** A Unix socket only this user can open; null where there can be none (Windows, or a CODEMUX_HOME whose path is too long for one). */
  socket: string | null;
  startedAt: string;
  /** Its start time and command line as the OS reports them, so that a pid another process has taken is never taken for it. */
  process: string | null;
}

/** The longest socket path every POSIX system takes (sockaddr_un holds 104 bytes on macOS, 108 on Linux, with the final NUL). */
const MAX_SOCKET_PATH_BYTES = 103;
/** An answer of an admin socket longer than this is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** How long `codemux forget` waits for an instance: it cancels the principal's jobs first (10 s at most). */
const FORGET_WAIT_MS = 30_000;
const PING_WAIT_MS = 5_000;
const FILE = /^instance-[0-9a-f]{12}\.json$/;

/**
 * Opens this instance's admin socket and run file; `close` removes both. The socket answers `GET /` (who it
 * is) and `DELETE /principals/{principal}` (forgets it here, as `DELETE /v1/principals` does with an admin
 * token; `?elsewhere=1` asks the other instances of its shared store too).
 */
export async function openLocalAdmin(
  core: Pick<CodemuxAdmin, "forget">,
  info: { url: string; home: string; logger: Logger },
): Promise<{ close(): Promise<void> }> {
  const dir = runDir(info.home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // A folder made by someone else's umask is made private: the socket's own mode is set only after it exists.
  if (((await stat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700);
  const key = randomBytes(6).toString("hex");
  const file = join(dir, `instance-${key}.json`);
  const path = join(dir, `instance-${key}.sock`);
  const usable = process.platform !== "win32" && Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
  if (!usable)
    info.logger.warn(
      `codemux forget cannot reach this instance on this machine (${process.platform === "win32" ? "Windows has no Unix sockets" : `the socket path ${path} is too long; set a shorter CODEMUX_HOME`}): it refuses while this instance runs, and names DELETE /v1/principals/{principal} instead.`,
    );
  const server = createServer((req, res) => void answer({ core, logger: info.logger }, req, res));
  if (usable) {
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(path, () => resolve()));
    await chmod(path, 0o600);
  }
  const instance: LocalInstance = {
    pid: process.pid,
    url: info.url,
    socket: usable ? path : null,
    startedAt: new Date().toISOString(),
    process: (await processIdentity(process.pid)) ?? null,
  };
  const handle = await open(file, "wx", 0o600);
  await handle.writeFile(`${JSON.stringify(instance, null, 2)}\n`);
  await handle.close();
  return {
    close: async () => {
      await rm(file, { force: true });
      if (usable) await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(path, { force: true });
    },
  };
}

async function answer({ core, logger }: { core: Pick<CodemuxAdmin, "forget">; logger: Logger }, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const send = (status: number, body: unknown): void => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  try {
    const url = new URL(req.url ?? "/", "http://codemux.local");
    if (req.method === "GET" && url.pathname === "/") return send(200, { pid: process.pid });
    const name = /^\/principals\/([^/]+)$/.exec(url.pathname)?.[1];
    if (req.method !== "DELETE" || name === undefined) return send(404, { error: "This socket answers DELETE /principals/{principal} only." });
    const principal = decodeURIComponent(name);
    if (!isPrincipalId(principal)) return send(400, { error: `"${principal.slice(0, 80)}" is not a principal.` });
    const forgotten = await core.forget(principal, { elsewhere: url.searchParams.get("elsewhere") === "1" });
    logger.info(`forgot ${principal} (asked by codemux forget on this machine)`);
    send(200, { principal, forgotten });
  } catch (error) {
    send(500, { error: (error as Error).message });
  }
}

/** The instances running on this machine under `home`, from their run files; the files of ones that are gone are removed. */
export async function localInstances(home: string): Promise<LocalInstance[]> {
  const dir = runDir(home);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => FILE.test(name));
  const found: LocalInstance[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const instance = await readInstance(file);
    const now = instance && isAlive(instance.pid) ? await processIdentity(instance.pid) : undefined;
    // Without an identity to compare (another OS), a live pid is taken for the instance: asking a gone one fails, and says so.
    if (instance && isAlive(instance.pid) && (instance.process === null || now === undefined || now === instance.process)) found.push(instance);
    else {
      await rm(file, { force: true });
      await rm(file.replace(/\.json$/, ".sock"), { force: true });
    }
  }
  return found;
}

async function readInstance(file: string): Promise<LocalInstance | undefined> {
  try {
    const value = JSON.parse(await readFile(file, "utf8")) as Partial<LocalInstance>;
    if (typeof value.pid !== "number" || typeof value.url !== "string") return undefined;
    return {
      pid: value.pid,
      url: value.url,
      socket: typeof value.socket === "string" ? value.socket : null,
      startedAt: String(value.startedAt),
      process: typeof value.process === "string" ? value.process : null,
    };
  } catch {
    return undefined;
  }
}

/** Whether the instance answers on its admin socket. */
export async function answers(instance: LocalInstance): Promise<boolean> {
  if (instance.socket === null) return false;
  try {
    return (await ask(instance.socket, { method: "GET", path: "/", timeoutMs: PING_WAIT_MS })).status === 200;
  } catch {
    return false;
  }
}

/** Asks the instance to forget `principal` (and, with `elsewhere`, its store's other instances); what it deleted, by kind. */
export async function forgetThrough(instance: LocalInstance, principal: string, options: { elsewhere: boolean }): Promise<ForgetReport> {
  const path = `/principals/${encodeURIComponent(principal)}${options.elsewhere ? "?elsewhere=1" : ""}`;
  const { status, body } = await ask(instance.socket as string, { method: "DELETE", path, timeoutMs: FORGET_WAIT_MS });
  const answer = JSON.parse(body) as { forgotten?: ForgetReport; error?: string };
  if (status !== 200 || answer.forgotten === undefined) throw new Error(answer.error ?? `it answered ${status}`);
  return answer.forgotten;
}

/** One request on a Unix socket, its answer bounded in size and time. */
function ask(socketPath: string, { method, path, timeoutMs }: { method: string; path: string; timeoutMs: number }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
        if (body.length > MAX_ANSWER_BYTES) req.destroy(new Error("its answer is too long"));
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`it did not answer within ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end();
  });
}
