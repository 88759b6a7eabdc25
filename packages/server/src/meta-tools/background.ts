import type { ToolResult } from "@codemux/core";
import { BadRequestError } from "../errors";
import type { BackgroundWork } from "../jobs";
import { textResult } from "../render";
import type { MetaToolContext } from "./registry";

/** Hands work to the core's job runner and answers at once with the job id. */
export async function inBackground(ctx: MetaToolContext, work: Omit<BackgroundWork, "session">): Promise<ToolResult> {
  if (!ctx.core.jobs) throw new BadRequestError("Background jobs are not enabled in this codemux; call without background, or start codemux with jobs on.");
  const job = await ctx.core.jobs.start({ ...work, session: ctx.session });
  const queued = job.position ? ` It is queued at position ${job.position}.` : "";
  return textResult(`Started job ${job.id} in the background.${queued} Collect it with jobs {"action":"output","ids":["${job.id}"]}.`);
}
