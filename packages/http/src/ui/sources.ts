import type { ToolResult } from "@codemux/core";

/** A tool the pin plugin holds back, as the Approvals page shows it. */
export interface PendingApproval {
  /** `server__tool` */
  name: string;
  server: string;
  reason: "changed" | "new server";
  /** The definition's fields that differ from the approved one (`description`, `inputSchema`...). */
  changed: string[];
  seenAt: string;
  /** The waiting definition's hash: "keep blocked" names it, so it never covers a definition the admin has not seen. */
  hash: string;
  /** When an admin chose to keep it blocked: the page lists it apart and no longer asks. */
  keptBlockedAt?: string;
  /** The approved definition and the one waiting, when the pin file kept them: the page shows their diff. */
  approved?: Record<string, unknown>;
  proposed?: Record<string, unknown>;
}

/** The quarantine of the pin plugin (`@codemux/hooks`' `pinApprovals(file)`). */
export interface UiApprovals {
  pending(): Promise<PendingApproval[]>;
  /** Approves `server__tool` (or every waiting tool of a server); resolves with the names approved. */
  approve(target: string): Promise<string[]>;
  /** Records that the definition of `name` with `hash` stays blocked; false when that definition no longer waits. */
  keepBlocked(name: string, hash: string): Promise<boolean>;
}

/** A background job as the Jobs page lists it (a `@codemux/jobs` `JobRecord` fits). */
export interface UiJob {
  id: string;
  kind: string;
  description: string;
  principal: string;
  status: string;
  createdAt: number;
  endedAt?: number;
  toolCalls: number;
  error?: string;
}

/** The jobs of every principal (`@codemux/jobs`' `JobManager` fits). */
export interface UiJobs {
  all(): UiJob[];
  result(job: UiJob): Promise<ToolResult | undefined>;
  /** Cancels a job of `principal`; `by` names who in the journal. */
  cancel(id: string, principal: string, by: string): Promise<unknown>;
}

/** What the admin page shows that lives outside `@codemux/http`; a page whose source is absent says how to turn it on. */
export interface UiSources {
  approvals?: UiApprovals;
  jobs?: UiJobs;
}
