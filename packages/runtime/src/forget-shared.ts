import type { Logger } from "@codemux/core";
import { TERMINAL, type JobStatus } from "@codemux/jobs";
import type { ForgetReport } from "@codemux/server";
import type { SharedState } from "./shared-state";

/** A principal's job records read at most, as the jobs tool lists them. */
const MAX_JOBS = 1_000;
/** How long forget waits for the jobs it cancelled on other instances to end before it deletes their records. */
const CANCEL_WAIT_MS = 10_000;
const CANCEL_POLL_MS = 200;

type SharedJob = { id: string; status: string; instance?: string };

/**
 * What `principal` owns in the shared store besides its kept results (the core's result store deletes
 * those): its job records, its queued jobs with their arguments, and the cache plugin's answers to it.
 * Its jobs still queued or running anywhere are taken out of the queue or cancelled first, and waited
 * for, so the instance running one does not write its last record back after the delete.
 */
export async function forgetShared(shared: SharedState, principal: string): Promise<ForgetReport> {
  const report: ForgetReport = {};
  const { jobShare, jobQueue, pluginStore } = shared;
  if (jobShare) {
    const cancelled = new Set<string>();
    for (const job of await unendedJobs(shared, principal)) {
      // Still waiting in the queue (even if the instance that queued it is gone): out it goes with its arguments.
      if (job.status === "queued" && (await jobQueue?.remove(job.id))) continue;
      // Running, or taken meanwhile: the instance running it hears the cancel; one that is gone runs nothing.
      if (job.instance === undefined || (await jobShare.alive(job.instance))) {
        await jobShare.cancel(job.id, "forget");
        cancelled.add(job.id);
      }
    }
    await waitForEnd(shared, principal, cancelled);
    report.sharedJobs = await jobShare.forget(principal);
  }
  if (pluginStore) {
    const answers = (await pluginStore.list({ owner: principal })).filter((entry) => entry.owner === principal);
    // Counted by who deleted it: every instance asked to forget lists the same shared entries.
    let deleted = 0;
    for (const entry of answers) if (await pluginStore.remove(entry.key)) deleted++;
    report.cachedAnswers = deleted;
  }
  return report;
}

/** The principal's jobs whose records say queued or running. */
async function unendedJobs(shared: SharedState, principal: string): Promise<SharedJob[]> {
  return ((await shared.jobShare?.list(principal, MAX_JOBS)) ?? []).flatMap((text) => {
    const { id, status, instance } = JSON.parse(text) as { id?: unknown; status?: unknown; instance?: unknown };
    if (typeof id !== "string" || typeof status !== "string" || TERMINAL.has(status as JobStatus)) return [];
    return [{ id, status, ...(typeof instance === "string" ? { instance } : {}) }];
  });
}

/** Until every job in `ids` has ended, at most CANCEL_WAIT_MS: a record written back later still expires with its retention. */
async function waitForEnd(shared: SharedState, principal: string, ids: Set<string>): Promise<void> {
  const deadline = Date.now() + CANCEL_WAIT_MS;
  while (ids.size > 0 && Date.now() < deadline) {
    if (!(await unendedJobs(shared, principal)).some((job) => ids.has(job.id))) return;
    await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
  }
}

/**
 * Asks every other running instance of the shared store to forget `principal` (what each holds in memory and
 * in its own folder: the admin page's activity, its audit lines, its cache): their counts are added up, with
 * `instances` that did and `instancesMissed` that did not; each of those is named in a warning with the route
 * that forgets it by hand.
 */
export async function forgetElsewhere(shared: SharedState, principal: string, logger: Logger): Promise<ForgetReport> {
  if (!shared.forgetRequests) return {};
  const { answered, missed } = await shared.forgetRequests.ask(principal);
  const report: ForgetReport = { instances: answered.length };
  for (const { forgotten } of answered) addCounts(report, forgotten);
  if (missed.length > 0) report.instancesMissed = missed.length;
  for (const { id, address, error } of missed)
    logger.warn(
      `forget: the codemux instance ${id} at ${address} ${error ? `failed to forget ${principal} (${error})` : "did not answer"}, so what it holds of ${principal} may still be there; ask it (curl -X DELETE ${address}/v1/principals/${encodeURIComponent(principal)} -H "Authorization: Bearer $ADMIN_TOKEN", a token with the admin scope) or run codemux forget again.`,
    );
  return report;
}

/** Adds `counts` into `report`, kind by kind. */
export function addCounts(report: ForgetReport, counts: ForgetReport): void {
  for (const [kind, count] of Object.entries(counts)) report[kind] = (report[kind] ?? 0) + count;
}
