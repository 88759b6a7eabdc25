import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { canonicalJson, sha256 } from "./canonical";
import { PinFileError } from "./errors";
import type { ScanFinding } from "@codemux/core";
import type { ToolInfo } from "./types";

/** A definition seen but not yet approved: changed since it was pinned, or of a quarantined new server. */
export interface PendingPin {
  hash: string;
  fields: Record<string, string>;
  seenAt: string;
  reason: "changed" | "new server" | "scan";
  /** What the scanner found in the definition waiting (security.scan), at most `MAX_KEPT_FINDINGS` of them. */
  findings?: ScanFinding[];
  /** The definition waiting (without `_meta`), to show what changed; absent past `MAX_KEPT_DEFINITION_CHARS`. */
  definition?: Record<string, unknown>;
  /** When an admin chose to keep this definition blocked: it stays quarantined, and the admin page no longer asks about it. */
  keptBlockedAt?: string;
}

export interface PinRecord {
  server: string;
  /** What besides a tool the scan holds (`server:instructions`, `server:prompt:NAME`...); absent for a tool. */
  kind?: "instructions" | "resource" | "resourceTemplate" | "prompt" | "skill" | "skillFile";
  /** The approved definition's hash; absent while a new server's tool waits for its first approval. */
  hash?: string;
  fields?: Record<string, string>;
  firstSeen: string;
  approvedAt?: string;
  pending?: PendingPin;
  /** The approved definition (without `_meta`), to diff a changed one against; absent past `MAX_KEPT_DEFINITION_CHARS` or in older files. */
  definition?: Record<string, unknown>;
}

/** Findings a pending record keeps to show the admin; the verdict counts all of them. */
export const MAX_KEPT_FINDINGS = 50;

/** A definition whose JSON is longer than this is not kept in the pin file (its hashes still are). */
export const MAX_KEPT_DEFINITION_CHARS = 64 * 1024;

/** The definition as the pin file keeps it to show a change: without `_meta`, or undefined when too large. */
export function keptDefinition(definition: ToolInfo): Record<string, unknown> | undefined {
  const { _meta: _, ...rest } = definition as ToolInfo & { _meta?: unknown };
  const text = canonicalJson(rest, MAX_KEPT_DEFINITION_CHARS);
  return text === undefined || text.length > MAX_KEPT_DEFINITION_CHARS ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

export interface PinFile {
  version: 1;
  tools: Record<string, PinRecord>;
}

/** The hash of a tool's definition (everything but `_meta`), and one per field to say what changed. */
export function hashDefinition(definition: ToolInfo): { hash: string; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(definition)) {
    if (key === "_meta" || value === undefined) continue;
    fields[key] = sha256(canonicalJson(value, 10_000_000) ?? "(too large)").slice(0, 16);
  }
  return { hash: sha256(canonicalJson(fields) ?? ""), fields };
}

/** The fields whose hashes differ, e.g. ["description", "inputSchema"]. */
export function changedFields(before: Record<string, string> | undefined, after: Record<string, string>): string[] {
  if (!before) return Object.keys(after);
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).sort();
}

export async function readPinFile(file: string): Promise<PinFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, tools: {} };
    throw new PinFileError(`Cannot read the pin file ${file} (${(error as Error).message}); check its permissions.`, { cause: error });
  }
  try {
    const data = JSON.parse(text) as PinFile;
    if (data?.version !== 1 || typeof data.tools !== "object" || data.tools === null) throw new Error("not a version 1 pin file");
    return data;
  } catch (error) {
    throw new PinFileError(`The pin file ${file} is damaged (${(error as Error).message}); move it away and codemux pins every tool afresh on first sight.`, {
      cause: error,
    });
  }
}

/** Writes atomically (a temporary file renamed over it), readable only by the user. */
export async function writePinFile(file: string, data: PinFile): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}
