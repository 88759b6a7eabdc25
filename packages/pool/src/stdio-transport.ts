import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ChildProcess } from "node:child_process";
import spawn from "cross-spawn";
import type { StdioTransportSpec } from "./config/types";
import { childEnvironment } from "./environment";
import { PoolError } from "./errors";
import { LineSplitter } from "./line-splitter";
import { StderrRing } from "./stderr-ring";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildProcessTransportOptions {
  stderr?: StderrRing;
  /** A line on stdout that is not JSON-RPC; servers that print banners keep working. */
  onNoise?: (line: string) => void;
  /** Largest single message accepted; a bigger one closes the connection. */
  maxMessageBytes?: number;
  parentEnv?: NodeJS.ProcessEnv;
}

/**
 * The stdio client transport of codemux. Unlike the SDK's, it keeps the exit code and the
 * stderr tail for error messages, skips non-JSON stdout lines instead of reporting errors,
 * passes only an allow-listed environment, and splits lines without re-copying big messages.
 * cross-spawn resolves `npx` to `npx.cmd` on Windows.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly stderr: StderrRing;
  exit: ExitInfo | undefined;
  #child: ChildProcess | undefined;
  readonly #lines: LineSplitter;
  #closed = false;

  constructor(readonly spec: StdioTransportSpec, readonly options: ChildProcessTransportOptions = {}) {
    this.stderr = options.stderr ?? new StderrRing();
    const max = options.maxMessageBytes ?? 256 * 1024 * 1024;
    this.#lines = new LineSplitter({
      maxLineBytes: max,
      onLine: (line) => this.#line(line),
      onOversize: () => {
        this.onerror?.(new PoolError("MESSAGE_TOO_LARGE", `a message from the server exceeded ${max} bytes`));
        void this.close();
      },
    });
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.spec.command, this.spec.args, {
        env: childEnvironment(this.spec.env, this.options.parentEnv),
        cwd: this.spec.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
      this.#child = child;
      child.once("error", (error: NodeJS.ErrnoException) => {
        const wrapped = error.code === "ENOENT"
          ? new PoolError("COMMAND_NOT_FOUND", `command not found: "${this.spec.command}" (is it installed and on PATH${this.spec.cwd ? `, or is cwd "${this.spec.cwd}" right` : ""}?)`, { cause: error })
          : new PoolError("SPAWN_FAILED", `could not start "${this.spec.command}": ${error.message}`, { cause: error });
        reject(wrapped);
        this.onerror?.(wrapped);
        this.#finish();
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
      });
      child.once("close", () => this.#finish());
      child.stdout?.on("data", (chunk: Buffer) => this.#lines.push(chunk));
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => this.stderr.push(chunk));
      child.stdin?.on("error", () => {
        // EPIPE after the child exited: the close handler reports it.
      });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || this.#closed) throw new PoolError("NOT_CONNECTED", "the server process is not running");
    const line = `${JSON.stringify(message)}\n`;
    if (!stdin.write(line)) await new Promise<void>((resolve) => stdin.once("drain", resolve));
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child || this.#closed) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("close", () => resolve());
    });
    const wait = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin?.end();
    if (!(await wait(1000))) {
      child.kill("SIGTERM");
      if (!(await wait(1000))) child.kill("SIGKILL");
    }
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#lines.clear();
    this.onclose?.();
  }

  #line(line: string): void {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.options.onNoise?.(line);
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (message.success) this.onmessage?.(message.data);
    else this.options.onNoise?.(line);
  }
}
