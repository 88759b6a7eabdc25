/** How a failed start is told: the exit, the stderr tail, the config's warnings. */

export function exitOf(transport: unknown): { code: number | null; signal: NodeJS.Signals | null } | undefined {
  return typeof transport === "object" && transport !== null && "exit" in transport
    ? (transport as { exit?: { code: number | null; signal: NodeJS.Signals | null } }).exit
    : undefined;
}

export function withTail(message: string, tail: string[]): string {
  return tail.length ? `${message}; stderr: ${tail.join(" | ")}` : message;
}

export function withConfigNote(message: string, warnings: string[] | undefined): string {
  return warnings?.length ? `${message} (config: ${warnings.join(" ")})` : message;
}
