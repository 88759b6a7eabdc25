import { LineSplitter, atTurnEnd, jsonRpcMessage } from "@codemux/core";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/core";
import type { ChildProcess } from "node:child_process";
import spawn from "cross-spawn";
import type { StdioTransportSpec } from "./config/types";
import { DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_MESSAGE_BYTES, STDIN_CLOSE_GRACE_MS } from "./defaults";
import { childEnvironment } from "./environment";
import { PoolError } from "./errors";
import { groupAlive, signalGroup, trackGroup, untrackGroup, usesProcessGroups, watchForExit } from "./process-groups";
import { childMarker } from "./self";
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
  /** The environment codemux runs in: the source of the inherited allow-list and of the nesting marker. */
  parentEnv?: NodeJS.ProcessEnv;
  /** Time between SIGTERM and SIGKILL for the server's process group. */
  killGraceMs?: number;
}

/**
 * The stdio client transport of codemux. Unlike the SDK's, it keeps the exit code and the
 * stderr tail for error messages, skips non-JSON stdout lines instead of reporting errors,
 * passes only an allow-listed environment, splits lines without re-copying big messages, and
 * runs the server in its own process group so that closing ends its wrappers and children too.
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
  #closing: Promise<void> | undefined;
  /** The group got its SIGTERM (from close(), or when the leader exited); nothing sends another. */
  #terminated = false;
  /** The messages sent in this turn of the event loop, not yet written. */
  #batch: OutgoingBatch | undefined;

  constructor(
    readonly spec: StdioTransportSpec,
    readonly options: ChildProcessTransportOptions = {},
  ) {
    this.stderr = options.stderr ?? new StderrRing();
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
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
      const parent = this.options.parentEnv ?? process.env;
      // Before the spawn: a SIGTERM that lands while the child starts must find the cleanup handler in place.
      watchForExit();
      const child = spawn(this.spec.command, this.spec.args, {
        env: { ...childEnvironment(this.spec.env, parent), ...childMarker(parent) },
        cwd: this.spec.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
        // A group of its own (not unref'd: codemux still owns it) so that close() reaches grandchildren.
        detached: usesProcessGroups,
      });
      this.#child = child;
      // At once, not on 'spawn' (a tick later): a signal handled in between must already see this group.
      if (child.pid !== undefined) trackGroup(child.pid);
      child.once("error", (error: NodeJS.ErrnoException) => {
        const wrapped =
          error.code === "ENOENT"
            ? new PoolError(
                "COMMAND_NOT_FOUND",
                `command not found: "${this.spec.command}" (is it installed and on PATH${this.spec.cwd ? `, or is cwd "${this.spec.cwd}" right` : ""}?)`,
                { cause: error },
              )
            : new PoolError("SPAWN_FAILED", `could not start "${this.spec.command}": ${error.message}`, { cause: error });
        reject(wrapped);
        this.onerror?.(wrapped);
        this.#finish();
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        // The server is gone: what it left in its group (a wrapper's child) goes too, unless close() signalled it already.
        if (child.pid !== undefined && usesProcessGroups && !this.#terminated) {
          this.#terminated = true;
          signalGroup(child.pid, "SIGTERM");
        }
      });
      child.once("close", () => {
        if (child.pid !== undefined && !groupAlive(child.pid)) untrackGroup(child.pid);
        this.#finish();
      });
      child.stdout?.on("data", (chunk: Buffer) => this.#lines.push(chunk));
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => this.stderr.push(chunk));
      child.stdin?.on("error", () => {
        // EPIPE after the child exited: the close handler reports it.
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || this.#closed || this.exit) return Promise.reject(new PoolError("NOT_CONNECTED", "the server process is not running"));
    let line: string;
    try {
      line = `${JSON.stringify(message)}\n`;
    } catch (error) {
      return Promise.reject(error);
    }
    // Messages sent in the same turn of the event loop (a snippet's Promise.all; under load, the calls of
    // every client whose request was read in one poll) leave as one string in one write: one syscall and
    // one wake-up of the server for all of them, and no per-message chunk for the stream to queue and hand
    // to writev. At the end of the turn (check phase), not nextTick: the flush waits for the poll phase's other
    // callbacks, not longer; and before the turn's acknowledgements to clients (atTurnEnd's rounds).
    if (this.#batch === undefined) {
      this.#batch = new OutgoingBatch();
      atTurnEnd(this.#flush);
    }
    this.#batch.text += line;
    return this.#batch.written;
  }

  /** Writes the turn's messages; their senders' promise settles once the stream took them (after a drain when it is full). */
  readonly #flush = (): void => {
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#batch = undefined;
    const stdin = this.#child?.stdin;
    if (!stdin || !stdin.writable) {
      batch.fail(new PoolError("NOT_CONNECTED", "the server process is not running"));
      return;
    }
    if (stdin.write(batch.text)) {
      batch.done();
      return;
    }
    const settle = () => {
      stdin.off("drain", settle);
      stdin.off("close", settle);
      batch.done();
    };
    stdin.on("drain", settle);
    stdin.on("close", settle);
  };

  /** Closes stdin, then SIGTERMs and finally SIGKILLs the server's whole process group; resolves when nothing of it is left. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    const pid = child.pid;
    const grace = this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const closed = new Promise<void>((resolve) => {
      if (this.#closed) resolve();
      else child.once("close", () => resolve());
    });
    // Timers stay ref'd: a one-shot command awaits this close at its top level, and an empty event loop would end it with exit 13.
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const within = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        void closed.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    const terminate = () => {
      this.#terminated = true;
      signalGroup(child, "SIGTERM");
    };
    // Messages sent in this turn still go out before stdin ends.
    this.#flush();
    child.stdin?.end();
    if (!(await within(STDIN_CLOSE_GRACE_MS))) {
      terminate();
      if (!(await within(grace))) signalGroup(child, "SIGKILL");
    }
    // The leader may be gone while a grandchild that let go of the pipes lives on in the group: one SIGTERM, then SIGKILL.
    if (pid !== undefined && usesProcessGroups && groupAlive(pid)) {
      if (!this.#terminated) terminate();
      for (let waited = 0; groupAlive(pid) && waited < grace; waited += 25) await sleep(25);
      if (groupAlive(pid)) signalGroup(pid, "SIGKILL");
    }
    if (pid !== undefined) untrackGroup(pid);
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
    const message = jsonRpcMessage(parsed, JSONRPCMessageSchema);
    if (message) this.onmessage?.(message);
    else this.options.onNoise?.(line);
  }
}

/** The text of the messages sent in one turn of the event loop, and the promise their senders share. */
class OutgoingBatch {
  text = "";
  done: () => void = () => undefined;
  fail: (error: Error) => void = () => undefined;
  readonly written = new Promise<void>((resolve, reject) => {
    this.done = resolve;
    this.fail = reject;
  });
}
