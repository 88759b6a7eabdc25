import { pinApprovals, type LoadedPlugins, type PinBook } from "@codemux/hooks";
import type { UiSources } from "@codemux/http";
import type { Jobs } from "@codemux/jobs";

/** What the admin page at /ui shows beside the core: the pin plugin's quarantine when it is on, and the jobs. */
export function uiSources(plugins: LoadedPlugins | undefined, jobs: Jobs | undefined): UiSources {
  const pin = plugins?.plugins.find((plugin) => plugin.name === "pin") as { book?: PinBook } | undefined;
  return { ...(pin?.book ? { approvals: pinApprovals(pin.book) } : {}), ...(jobs ? { jobs: jobs.manager } : {}) };
}
