import { textResult, type BackgroundWork, type MetaToolContext, type ToolResult } from "@codemux/core";
import { BadRequestError } from "../errors";
import type { CodemuxServices } from "../services";

/** Hands work to the job runner and answers at once with the job id. */
export async function inBackground(ctx: MetaToolContext<CodemuxServices>, work: Omit<BackgroundWork, "session">): Promise<ToolResult> {
  const { jobs } = ctx.services;
  if (!jobs) throw new BadRequestError("Background jobs are not enabled in this codemux; call without background, or start codemux with jobs on.");
  const job = await jobs.start({ ...work, session: ctx.session });
  const queued = job.position ? ` It is queued at position ${job.position}.` : "";
  return textResult(`Started job ${job.id} in the background.${queued} Collect it with jobs {"action":"output","ids":["${job.id}"]}.`);
}
