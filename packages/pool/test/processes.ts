import { readdirSync, readFileSync } from "node:fs";

export interface ProcessInfo {
  pid: number;
  pgrp: number;
  state: string;
  cmdline: string;
}

/** Every live (not zombie) process whose command line contains `marker`, read from /proc. */
export function processesWith(marker: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      if (!cmdline.includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue;
      found.push({ pid: Number(entry), state: fields[0]!, pgrp: Number(fields[2]), cmdline });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Resolves once `check` returns a truthy value (the test's own timeout bounds the wait). */
export async function until<T>(check: () => T | undefined | false): Promise<T> {
  for (;;) {
    const value = check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}
