import { pinApprovals, type LoadedPlugins, type PinBook } from "@codemux/hooks";
import type { UiSources } from "@codemux/http";
import type { Jobs } from "@codemux/jobs";

/**
 * What the admin page at /ui shows beside the core: the pin plugin's quarantine while it is on (read at
 * each page, so that a reload turning pin on or off shows at once), and the jobs.
 */
export function uiSources(plugins: LoadedPlugins | undefined, jobs: Jobs | undefined): UiSources {
  const sources: UiSources = jobs ? { jobs: jobs.manager } : {};
  if (!plugins) return sources;
  const approvals = new WeakMap<PinBook, NonNullable<UiSources["approvals"]>>();
  return Object.defineProperty(sources, "approvals", {
    enumerable: true,
    get: () => {
      const book = (plugins.plugins.find((plugin) => plugin.name === "pin") as { book?: PinBook } | undefined)?.book;
      if (!book) return undefined;
      let view = approvals.get(book);
      if (!view) approvals.set(book, (view = pinApprovals(book)));
      return view;
    },
  });
}
