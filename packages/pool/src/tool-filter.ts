import type { ToolFilter } from "./config/types";

/** `*` matches any run of characters; everything else is literal. */
function toRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
}

/** Applies a server's `tools.allow` / `tools.deny` lists (deny wins). */
export function createToolFilter(filter: ToolFilter): (toolName: string) => boolean {
  const allow = filter.allow?.map(toRegExp);
  const deny = filter.deny?.map(toRegExp) ?? [];
  return (name) => (!allow || allow.some((r) => r.test(name))) && !deny.some((r) => r.test(name));
}

/** Why the filter hides `toolName`, for the error a call to it gets. */
export function toolFilterReason(filter: ToolFilter, toolName: string): string {
  return denyReason(filter, toolName) ?? "it is not in the config's tools.allow";
}

/** That `tools.deny` hides `toolName`, or undefined when none of its patterns matches. */
export function denyReason(filter: ToolFilter, toolName: string): string | undefined {
  return filter.deny?.map(toRegExp).some((r) => r.test(toolName)) ? "it is denied by the config's tools.deny" : undefined;
}
