import type { ScanFinding } from "./scan/types";

/**
 * A tool (or a server's instructions, resource or prompt the scan flagged) the pin plugin holds back, as an admin view (the admin page, `codemux approve`) reads it:
 * the contract between `@codemux/hooks`, which keeps the quarantine, and `@codemux/http`, which shows it.
 */
export interface PendingApproval {
  /** `server__tool` */
  name: string;
  server: string;
  /**
   * What waits, besides a tool (absent): the server's instructions, or a resource, resource template, prompt or skill
   * the scan flagged (or a skill's `SKILL.md` or file, `skillFile`), named `server:instructions`, `server:prompt:NAME`,
   * `server:resource:URI`, `server:skillFile:URI`...
   */
  kind?: "instructions" | "resource" | "resourceTemplate" | "prompt" | "skill" | "skillFile";
  /** `scan`: the scanner found text aimed at the model in it (security.scan "quarantine"); `findings` say what. */
  reason: "changed" | "new server" | "scan";
  /** The scanner's findings in the waiting definition, when it found any. */
  findings?: ScanFinding[];
  /** The definition's fields that differ from the approved one (`description`, `inputSchema`...); empty for a new server's tool. */
  changed: string[];
  seenAt: string;
  /** The waiting definition's hash: a decision names it, so it never covers a definition the admin has not seen. */
  hash: string;
  /** When an admin chose to keep it blocked: the page lists it apart and no longer asks. */
  keptBlockedAt?: string;
  /** The approved definition and the one waiting, when the pin file kept them (up to 64 KiB each). */
  approved?: Record<string, unknown>;
  proposed?: Record<string, unknown>;
}

/** The pin plugin's quarantine as an admin changes it (the running plugin reads the pins again before it refuses a call). */
export interface PinApprovals {
  pending(): Promise<PendingApproval[]>;
  /**
   * Approves `server__tool` (or every waiting tool of a server); resolves with the names approved. With `hash`,
   * only while that definition is the one waiting: an admin approves what they saw, not what changed since.
   */
  approve(target: string, hash?: string): Promise<string[]>;
  /** Records that the definition of `name` with `hash` stays blocked; false when that definition no longer waits. */
  keepBlocked(name: string, hash: string): Promise<boolean>;
}
