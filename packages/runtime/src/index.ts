/**
 * What the codemux CLI runs: one start of codemux from its config, read once (`loadCodemuxConfig`), composed
 * by `startCodemux` from the pool, the server, the plugins, the jobs and the shared state (`openSharedState`).
 */
export { loadCodemuxConfig, type CodemuxConfig, type LoadConfigOptions } from "./config";
export { RuntimeError, type RuntimeErrorCode } from "./errors";
export { addCounts } from "./forget-shared";
export { forgetOffline } from "./forget";
export type { ConfigReload } from "./reload";
export { openSharedState, openStoreClient, storeSettingOf, type SharedState, type StoreFlags } from "./shared-state";
export { readRawConfig, startCodemux, type Started, type StartOptions } from "./start";
export { startTracing, stopTracing } from "./tracing";
