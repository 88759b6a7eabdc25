import { PluginRefusedError } from "../errors";
import { globMatcher } from "@codemux/core";
import type { Plugin } from "../types";

export interface GuardOptions {
  /** Ask before tools whose server marks them `destructiveHint: true`; default true. */
  destructive?: boolean;
  /** Also ask before these `server__tool` globs. */
  confirm?: string[];
  /** Refuse these outright, without asking. */
  deny?: string[];
  /** Never ask for these (a destructive tool you trust). */
  allow?: string[];
  /** How long the user has to answer; default 120 000 ms. */
  answerTimeoutMs?: number;
}

/**
 * `guard`: destructive (or listed) tools need the user's confirmation, asked through MCP
 * elicitation on the calling client; refused with a clear message when the client cannot ask,
 * the user declines, or the tool is on the deny list. Fail-closed: a guard must not fail open.
 */
export function guardPlugin(options: GuardOptions = {}): Plugin {
  const denied = globMatcher(options.deny);
  const listed = globMatcher(options.confirm);
  const allowed = globMatcher(options.allow);
  const answerTimeoutMs = options.answerTimeoutMs ?? 120_000;
  return {
    name: "guard",
    priority: 800,
    failClosed: true,
    // The user's answer takes as long as it takes, up to the answer timeout.
    timeoutMs: answerTimeoutMs + 5_000,
    async beforeCall(call) {
      if (denied(call.name)) {
        return {
          action: "abort",
          error: new PluginRefusedError("guard", `${call.name} is denied by the guard plugin (plugins.guard.deny in the config); it was not called.`),
        };
      }
      if (allowed(call.name)) return;
      const destructive = options.destructive !== false && call.annotations.destructiveHint === true;
      if (!destructive && !listed(call.name)) return;
      const why = destructive ? "its server marks it destructive" : "the config lists it for confirmation";
      const peer = call.session.peer;
      if (!peer?.capabilities()?.elicitation) {
        return {
          action: "abort",
          error: new PluginRefusedError(
            "guard",
            `${call.name} needs the user's confirmation (${why}), but this client cannot ask the user (it does not support MCP elicitation); it was not called. Ask the user to run it themselves, or allow it with plugins.guard.allow in the config.`,
            { code: "NOT_CONFIRMED" },
          ),
        };
      }
      let args = JSON.stringify(call.arguments) ?? "{}";
      if (args.length > 1000) args = `${args.slice(0, 1000)}... (${args.length} characters)`;
      const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(answerTimeoutMs)]) : AbortSignal.timeout(answerTimeoutMs);
      let answer: Awaited<ReturnType<typeof peer.elicit>>;
      try {
        answer = await peer.elicit(
          {
            message: `Allow ${call.name} to run? ${why[0]!.toUpperCase()}${why.slice(1)}.\nArguments: ${args}`,
            requestedSchema: {
              type: "object",
              properties: { confirm: { type: "boolean", title: `Run ${call.name}`, description: "Yes to run the tool now, no to refuse it." } },
              required: ["confirm"],
            },
          },
          { signal },
        );
      } catch (error) {
        return {
          action: "abort",
          error: new PluginRefusedError(
            "guard",
            `${call.name} needs the user's confirmation (${why}), and asking failed (${error instanceof Error ? error.message.slice(0, 200) : String(error)}); it was not called.`,
            { code: "NOT_CONFIRMED" },
          ),
        };
      }
      if (answer.action === "accept" && answer.content?.confirm === true) {
        call.logField("guard", "confirmed");
        return;
      }
      call.logField("guard", "declined");
      return {
        action: "abort",
        error: new PluginRefusedError("guard", `The user declined to run ${call.name} (${why}); it was not called. Do not retry it unless the user asks.`, {
          code: "NOT_CONFIRMED",
        }),
      };
    },
  };
}
