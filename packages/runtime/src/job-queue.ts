import type { CodemuxCalls } from "@codemux/server";
import type { Jobs } from "@codemux/jobs";
import type { SharedState } from "./shared-state";

/** With a shared queue: jobs this instance has no room for wait in Redis, and a taken job runs as its meta-tool on this instance's surface. */
export function shareJobQueue(jobs: Jobs | undefined, core: CodemuxCalls, shared: SharedState | undefined): void {
  if (!jobs || !shared?.jobQueue) return;
  jobs.manager.shareQueue(shared.jobQueue, ({ kind, request }, context) => core.surface().callTool(kind, request, context));
}
