import { POLICY_RULE_STATE } from "@codemux/core";
import { isAbsolute, join, resolve } from "node:path";
import { digestOf, resultSize } from "../canonical";
import { SHORT_CIRCUIT_META } from "../chain";
import { HooksError } from "../errors";
import { Redactor, type RecordRedactor } from "../redactor";
import { RotatingFile } from "../rotating-file";
import type { Plugin, PluginCall, PluginInitContext } from "../types";

export interface AuditOptions {
  /** The log file; `audit/audit.jsonl` under the data dir by default; relative to the config's folder. */
  file?: string;
  /** Rotate past this size (bytes); default 10 MiB. */
  maxBytes?: number;
  /** Files kept, the current one included; default 5. */
  files?: number;
  /** Write the arguments (secrets masked) as well as their digest; default false. */
  includeArguments?: boolean;
  /** Masks secrets in arguments and error messages; the built-in patterns by default (codemux gives the redact plugin's while it is on). */
  redactor?: RecordRedactor;
}

/** One line of the audit log. */
export interface AuditLine {
  time: string;
  id: string;
  principal: string;
  session: string;
  origin: string;
  server: string;
  tool: string;
  /** First 16 hex digits of the SHA-256 of the arguments' canonical JSON. */
  argsDigest: string;
  arguments?: unknown;
  durationMs: number;
  /** ok, tool_error (the tool answered isError), error (it threw), refused (a plugin refused), short_circuit (a plugin answered, e.g. a cache hit). */
  outcome: "ok" | "tool_error" | "error" | "refused" | "short_circuit";
  /** The plugin that refused or answered, or `policy` when the principal's policy refused the call. */
  by?: string;
  /** The policy rule that decided the call (allowed or refused), when policies are configured. */
  rule?: string;
  error?: string;
  resultBytes: number;
}

const STATE = "audit:arguments";
/** How often lines past their principal's retention are removed (also once at start). */
const PRUNE_EVERY_MS = 60 * 60_000;

/** The principal and time of an audit line, or undefined for a line that is not one. */
function lineFacts(line: string): { principal: string; time: number } | undefined {
  try {
    const value = JSON.parse(line) as Partial<AuditLine>;
    return typeof value.principal === "string" && typeof value.time === "string" ? { principal: value.principal, time: Date.parse(value.time) } : undefined;
  } catch {
    return undefined;
  }
}

/** What an audit line says besides the call: who refused or answered, the error, the result's size. */
interface LineExtra {
  by?: string;
  error?: string;
  resultBytes?: number;
}

/** The audit line of a call: its arguments as they came in (digested, and written masked when asked), its outcome and duration. */
function auditLine(
  call: PluginCall,
  extra: LineExtra & { outcome: AuditLine["outcome"] },
  how: { now: number; redactor: RecordRedactor; includeArguments: boolean },
): AuditLine {
  const { now, redactor } = how;
  const args = (call.state.get(STATE) as Record<string, unknown> | undefined) ?? call.arguments;
  const rule = call.state.get(POLICY_RULE_STATE);
  return {
    time: new Date(now).toISOString(),
    id: call.id,
    principal: call.principal,
    session: call.session.id,
    origin: call.origin,
    server: call.server,
    tool: call.tool,
    argsDigest: digestOf(args),
    ...(how.includeArguments ? { arguments: redactor.value(args, { keys: true }).value } : {}),
    durationMs: Math.max(0, now - call.startedAt),
    outcome: extra.outcome,
    ...(extra.by ? { by: extra.by } : {}),
    ...(typeof rule === "string" ? { rule } : {}),
    ...(extra.error ? { error: redactor.text(extra.error.slice(0, 300)).text } : {}),
    resultBytes: extra.resultBytes ?? 0,
  };
}

/** Removes the lines older than their principal's retention; resolves with how many went (none when the file cannot be rewritten, said in the log). */
async function pruneLines(
  writer: RotatingFile,
  { keepFor, now, logger }: { keepFor: (principal: string) => number | undefined; now: number; logger: PluginInitContext["logger"] | undefined },
): Promise<number> {
  try {
    return await writer.filter((line) => {
      const facts = lineFacts(line);
      const ms = facts && keepFor(facts.principal);
      return facts !== undefined && ms !== undefined && now - facts.time > ms;
    });
  } catch (error) {
    logger?.warn(`audit: could not remove lines past their retention (${(error as Error).message}); tried again within the hour.`);
    return 0;
  }
}

/** The audit file: `file` (relative to the config's folder), else `audit/audit.jsonl` in codemux's folder. */
function auditFile(file: string | undefined, ctx: PluginInitContext): string {
  if (!file) return join(ctx.dataDir, "audit", "audit.jsonl");
  return isAbsolute(file) ? file : resolve(ctx.configDir, file);
}

/**
 * `audit`: one JSON line per call to a size-rotated file. Highest priority, so it sees refusals
 * and cache hits of every other plugin; never blocks a call (lines are written in the background).
 */
export function auditPlugin(options: AuditOptions = {}): Plugin & { flush(): Promise<void>; prune(): Promise<number>; readonly file: string | undefined } {
  let writer: RotatingFile | undefined;
  let clock: () => number = Date.now;
  let retentionMs: ((principal: string) => number | undefined) | undefined;
  let pruneTimer: NodeJS.Timeout | undefined;
  let logger: PluginInitContext["logger"] | undefined;
  const redactor = options.redactor ?? new Redactor();

  const includeArguments = options.includeArguments === true;
  const write = (call: PluginCall, outcome: AuditLine["outcome"], extra: LineExtra) => {
    writer?.append(JSON.stringify(auditLine(call, { ...extra, outcome }, { now: clock(), redactor, includeArguments })));
  };

  /** Removes the lines older than their principal's retention; resolves with how many went. */
  const prune = async (): Promise<number> => (writer && retentionMs ? pruneLines(writer, { keepFor: retentionMs, now: clock(), logger }) : 0);

  return {
    name: "audit",
    priority: 1000,
    get file() {
      return writer?.path(0);
    },
    init(ctx) {
      clock = ctx.clock;
      const file = auditFile(options.file, ctx);
      writer = new RotatingFile({ file, maxBytes: options.maxBytes ?? 10 * 1024 * 1024, files: options.files ?? 5 });
      writer.onError = (error) =>
        ctx.logger.warn(`audit: cannot write ${file} (${(error as Error).message}); audit lines are being lost until it is writable.`);
      logger = ctx.logger;
      const retention = ctx.retentionMs;
      if (retention) {
        retentionMs = (principal) => retention("audit", principal);
        void prune();
        pruneTimer = setInterval(() => void prune(), PRUNE_EVERY_MS);
        pruneTimer.unref();
      }
    },
    prune,
    async forget(principal) {
      return (await writer?.filter((line) => lineFacts(line)?.principal === principal)) ?? 0;
    },
    beforeCall(call) {
      call.state.set(STATE, call.arguments);
    },
    afterCall(call, result) {
      const by = result._meta?.[SHORT_CIRCUIT_META];
      write(call, typeof by === "string" ? "short_circuit" : result.isError ? "tool_error" : "ok", {
        ...(typeof by === "string" ? { by } : {}),
        resultBytes: resultSize(result),
      });
    },
    onError(call, error) {
      const refused = HooksError.isInstance(error) && error.code !== "PLUGIN_FAILED";
      const plugin = HooksError.isInstance(error) ? error.data?.plugin : undefined;
      write(call, refused ? "refused" : "error", {
        ...(typeof plugin === "string" ? { by: plugin } : {}),
        error: error instanceof Error ? error.message : String(error),
      });
    },
    onRefused(call, error) {
      write(call, "refused", { by: "policy", error: error.message });
    },
    async flush() {
      await writer?.flush();
    },
    async close() {
      clearInterval(pruneTimer);
      await writer?.flush();
    },
  };
}
