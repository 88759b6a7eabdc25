export { Codemux } from "./codemux";
export { CoreLink } from "./core-link";
export type {
  CodemuxAdmin,
  CodemuxCalls,
  CodemuxLifecycle,
  CodemuxOptions,
  CodemuxPorts,
  CodemuxQueries,
  ForgetOptions,
  ForgetReport,
  Forgetter,
} from "./codemux";
export {
  SPILL_BYTES_RULE,
  codemuxHome,
  findConfigFile,
  homeConfigFile,
  isSpillBytes,
  resolveConfig,
  resultFormatOf,
  scanModeOf,
  spillBytesOf,
  stateKeyOf,
  tracingOf,
} from "./config";
export type { ConfigLocation, FindConfigOptions, ResolveConfigOptions, TracingSettings } from "./config";
export {
  BadRequestError,
  InvalidArgumentsError,
  PolicyRateLimitedError,
  PolicyRefusedError,
  ResourceReadError,
  ResultNotFoundError,
  ServerError,
  StoreError,
  UnknownMetaToolError,
  UnknownServerError,
} from "./errors";
export type { ServerErrorCode } from "./errors";
export type { TaskStoreFactory } from "./jobs";
export { readInput } from "./meta-tools/input";
export { keptStat, readKept, type ReadResultRequest } from "./meta-tools/read-result";
export type { ModuleSource } from "./modules/namespace";
export { callRequest } from "./pipeline/call-request";
export { policiesOf, type PolicyConfig, type PolicyRule } from "./policy/config";
export { explainPolicy, type CatalogFacts, type CheckedTool, type PolicyDecision } from "./policy/explain";
export type { PolicySubject } from "./policy/policies";
export { CLI_HINTS, REST_HINTS, type AnswerHints } from "./render/hints";
export { keepIfLarge, keptNotice, type LimitedResult } from "./render/limit-result";
export { errorResult, errorText, executionBody, executionResult } from "./render/text";
export { RESULT_FORMATS, toonText, type ResultFormat } from "./render/toon";
export { retentionFor, retentionOf, type Retention, type RetentionTimes } from "./retention";
export { checkServer, searchCatalog, type SearchAnswer, type SearchDetail, type SearchRequest } from "./search";
export type { CodemuxServices } from "./services";
export { createSessionServer } from "./session";
export { openSessionServer, type ConnectableSession, type SessionServerLaneOptions } from "./connect";
export type { FastLane } from "./fast-lane";
export type { ProtocolEra, SessionHost, SessionServerOptions } from "./session";
export { parkInstanceOf } from "./signed-state";
export { skillsFolder } from "./skills/library";
export type { ListedSkill, Skill } from "./skills/library";
export { FileStore } from "./stores/file-store";
export type { FileStoreOptions } from "./stores/file-store";
export { MemoryStore } from "./stores/memory-store";
export { CODE_META_TOOLS } from "./surfaces/code";
export { BUILT_IN_SURFACES } from "./surfaces/index";
export { DISPATCH_TOOL_NAME } from "./surfaces/dispatch";
export { dispatchFilesOf, type DispatchFiles } from "./surfaces/dispatch-files";
export type { SurfaceContext, SurfaceFactory } from "./surfaces/surface";
export {
  SCAN_MODES,
  type ItemKind,
  type ItemScan,
  type ScanMode,
  type HeldItemKind,
  type ItemGate,
  type ScreenGate,
  type ScreenedItem,
  type ScreenedTool,
  type ServerScan,
  type ToolScan,
} from "./screen";
export type { ToolPool } from "./tool-pool";
export { VERSION } from "./version";
