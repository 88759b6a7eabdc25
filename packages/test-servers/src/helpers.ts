import { misbehavingServerPath } from "./paths";

/** A config entry (stdio) that starts the misbehaving server as `name`, with `extra` fields such as `env`. */
export function misbehavingEntry(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [misbehavingServerPath, "--name", name], ...extra };
}

/** Resolves once `check` holds, asking every 50 ms; throws after 10 s (what a test waits for happens in far less). */
export async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the condition never held");
}
