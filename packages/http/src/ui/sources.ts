import type { PinApprovals, ToolResult } from "@codemux/core";

/** The quarantine of the pin plugin (`@codemux/hooks`' `pinApprovals(book)`). */
export type UiApprovals = PinApprovals;

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
