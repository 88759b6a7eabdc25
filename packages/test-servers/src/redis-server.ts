import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** Where a program is on PATH, or undefined. */
export function findProgram(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/bin"];
  return dirs.map((dir) => join(dir, name)).find((path) => existsSync(path));
}

/**
 * True when `name` is installed. Missing on a developer's machine: says how to install it (the suite
 * then skips); missing under CI=true: throws, so CI never passes by skipping.
 */
export function haveProgram(name: string, debianPackage: string): boolean {
  if (findProgram(name)) return true;
  const hint = `${name} is not installed: these tests need a real one. Install it with \`sudo apt-get install ${debianPackage}\` (Debian, Ubuntu) or your system's package manager.`;
  if (process.env.CI === "true") throw new Error(`${hint} Under CI=true the tests fail instead of skipping.`);
  console.warn(`skipping: ${hint}`);
  return false;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** A real redis-server on a random port, persisting every write (appendonly, appendfsync always), as codemux's docs require. */
export interface RedisServer {
  port: number;
  url: string;
  /** Its data folder (the append-only file). */
  dir: string;
  /** Kills it (SIGKILL by default: no chance to save anything more). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data folder. */
  restart(): Promise<void>;
  /** Stops it answering (SIGSTOP) until `resume()`: a server that is up but too slow for every command's bound. */
  pause(): void;
  /** Lets a paused server answer again (SIGCONT); the commands sent meanwhile then run. */
  resume(): void;
  /** Kills it and removes its folder. */
  stop(): Promise<void>;
}

export async function startRedisServer(options: { appendfsync?: "always" | "everysec" } = {}): Promise<RedisServer> {
  const program = findProgram("redis-server");
  if (!program) throw new Error("redis-server is not installed (apt-get install redis-server).");
  const dir = await mkdtemp(join(tmpdir(), "codemux-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      options.appendfsync ?? "always",
      "--save",
      "",
    ];
    const started = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
    child = started;
    await new Promise<void>((resolve, reject) => {
      let output = "";
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      };
      started.stdout?.on("data", onData);
      started.stderr?.on("data", onData);
      started.once("exit", (code) => reject(new Error(`redis-server exited (${code}) before it was ready: ${output.slice(-500)}`)));
    });
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill(signal);
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill,
    restart: launch,
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    stop: async () => {
      child?.kill("SIGCONT");
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
