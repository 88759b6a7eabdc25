import type { LoadedPlugins, PluginChanges } from "@codemux/hooks";
import type { ReloadSummary } from "@codemux/http";
import type { PoolConfig } from "@codemux/pool";
import type { CodemuxAdmin, CodemuxQueries, ScanMode } from "@codemux/server";

/** What applying an edited config changed: its servers (`added`, `removed`, `changed`), and its policies and plugins when they did. */
export interface ConfigReload extends ReloadSummary {
  policies?: "changed";
  /** The plugins turned on, off or given other options: `pin on, guard off, audit changed`. */
  plugins?: string;
}

/**
 * Applies an edited config file as one change: its plugins are checked and started beside those in force,
 * then the core takes its servers and policies, then the plugins swap in between two calls. A mistake
 * anywhere (a plugin option, a policy, a server) changes nothing: a security plugin is never shown on
 * while it is off, nor left on after the file turned it off.
 */
export function configReloader(
  core: CodemuxAdmin & Pick<CodemuxQueries, "policies">,
  plugins: LoadedPlugins | undefined,
  file: { read: () => Promise<unknown>; scanMode?: ((raw: unknown) => ScanMode) | undefined },
): { reload(config: PoolConfig): Promise<ConfigReload> } {
  return {
    reload: async (config) => {
      const raw = await file.read();
      // Checked first: a wrong security.scan changes nothing.
      const mode = file.scanMode?.(raw);
      const prepared = plugins ? await plugins.prepare(raw) : undefined;
      const policies = JSON.stringify(core.policies);
      let servers: ReloadSummary;
      try {
        servers = await core.reload(config);
      } catch (error) {
        await prepared?.discard();
        throw error;
      }
      const changed = prepared ? describe(prepared.commit()) : "";
      // The plugins in force may now hold other tools back (pin on or off), and the mode may have changed.
      if (mode !== undefined)
        core.rescreen({
          mode,
          gate: plugins ? (tools) => plugins.screen(tools) : undefined,
          itemGate: plugins ? (scope, flagged) => plugins.holdItems(scope, flagged) : undefined,
        });
      return {
        ...servers,
        ...(JSON.stringify(core.policies) === policies ? {} : { policies: "changed" as const }),
        ...(changed ? { plugins: changed } : {}),
      };
    },
  };
}

function describe(changes: PluginChanges): string {
  return [...changes.added.map((n) => `${n} on`), ...changes.removed.map((n) => `${n} off`), ...changes.changed.map((n) => `${n} changed`)].join(", ");
}
