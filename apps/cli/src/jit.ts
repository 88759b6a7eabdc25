import { setFlagsFromString } from "node:v8";
import { UsageError } from "./errors";

/**
 * V8's interrupt budget once `serve --http` listens: how much bytecode a function runs before V8 looks
 * at optimizing it (V8's default is 67,584 bytes, the same for every program). A call through codemux
 * runs many small functions once each, so with the default they are still being compiled thousands of
 * calls after a start; at 8,000 the first 3,000 calls of one client cost 10-20 % less CPU in all
 * and steady state is unchanged (docs/perf/peers.md, "Warm-up"). Set after the start, not before it,
 * so the start's own code (run once) is not optimized for nothing.
 */
export const JIT_BUDGET_DEFAULT = 8000;

const BOUNDS = { min: 1000, max: 1_000_000 };

/**
 * The budget `CODEMUX_JIT_BUDGET` asks for: a number of bytes, or `0`/`off`/`false` to leave V8's own;
 * undefined as well when node was started with `--interrupt-budget` (the operator's flag stands).
 */
export function jitBudget(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | undefined {
  if (execArgv.some((arg) => arg.startsWith("--interrupt-budget=") || arg.startsWith("--interrupt_budget=") || arg === "--interrupt-budget")) return undefined;
  const raw = env.CODEMUX_JIT_BUDGET?.trim().toLowerCase();
  if (raw === undefined || raw === "") return JIT_BUDGET_DEFAULT;
  if (raw === "0" || raw === "off" || raw === "false") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < BOUNDS.min || value > BOUNDS.max) {
    throw new UsageError(
      `CODEMUX_JIT_BUDGET is "${raw.slice(0, 40)}": give a whole number of bytes from ${BOUNDS.min} to ${BOUNDS.max} (default ${JIT_BUDGET_DEFAULT}), or off to keep V8's own.`,
    );
  }
  return value;
}

/** Applies `jitBudget()`; returns what it set, for the debug log. */
export function tuneJit(budget: number | undefined): number | undefined {
  if (budget !== undefined) setFlagsFromString(`--interrupt-budget=${budget}`);
  return budget;
}
