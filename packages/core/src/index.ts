export { isLoopback } from "./address";
export { composeMiddleware } from "./compose";
export {
  FOLLOWED_TASK_STATE,
  POLICY_RULE_STATE,
  type CallContext,
  type CallOrigin,
  type CallRequest,
  type ClientPeer,
  type NextCall,
  type RefusalObserver,
  type SessionInfo,
  type ToolCallMiddleware,
} from "./context";
export { ANONYMOUS_PRINCIPAL, LOCAL_PRINCIPAL, isPrincipalId, principalOfName, tokenPrincipal } from "./principal";
export { CodemuxError, ERROR_BRAND, isCodemuxError, type CodemuxErrorOptions, type ErrorClass } from "./errors";
export { globMatcher } from "./glob";
export { atTurnEnd, type TurnRound } from "./turn";
export { LineSplitter, isProgressToken, jsonRpcMessage, plainResultMeta, withoutServerInfo, type LineSplitterOptions, type MessageSchema } from "./framing";
export {
  defineMetaTool,
  type BackgroundWork,
  type InputProperty,
  type InputSchema,
  type JobRunner,
  type MetaTool,
  type MetaToolContext,
  type MetaToolServices,
  type RequestContext,
  type Surface,
} from "./meta-tool";
export { LOG_LEVELS, redactingLogger, silentLogger, isSwitchedOff, stderrLogger, type LogLevel, type Logger, type StderrLoggerOptions } from "./logger";
export { NO_MASK, SECRET_PATTERNS, isSecretParameter, maskUrl, redactSecrets, type SecretMask, type SecretPattern } from "./mask";
export { ADMIN_SCOPE, METRICS_SCOPE, hasScope } from "./rights";
export { closestKey, closestNames, editDistance } from "./suggest";
export type {
  AudioContent,
  ClientCapabilities,
  ContentBlock,
  CreateMessageResult,
  ElicitResult,
  EmbeddedResource,
  ImageContent,
  InputRequest,
  InputRequiredResult,
  InputResume,
  InputRound,
  ListRootsResult,
  Progress,
  SamplingMessage,
  DetailedTask,
  DownstreamTaskHandling,
  ExtensionTask,
  Task,
  TaskExtensionStore,
  TaskInputRequest,
  TaskRun,
  TaskRunContext,
  TaskStore,
  BlobResourceContents,
  ResourceContents,
  TextResourceContents,
  ResourceLink,
  TextContent,
  ToolResult,
} from "./mcp";
export {
  BRIDGE_SPECIFIER,
  MAX_TOOL_NAME_LENGTH,
  MODULE_ROOT,
  SCHEMA_MODULE_SUFFIX,
  SEPARATOR,
  SERVERS_PREFIX,
  SERVER_MODULE_NAMES,
  SERVER_NAME_PATTERN,
  isReservedWord,
  qualifiedToolName,
  serverModuleSpecifier,
  splitQualifiedName,
  splitWords,
  toFunctionName,
  toolModuleSpecifier,
  uniqueFunctionNames,
} from "./names";
export { lineDiff } from "./line-diff";
export { callLine, oneLine } from "./progress";
export { TASKS_EXTENSION, declaresTasks } from "./task-extension";
export { APPS_EXTENSION, APP_MIME_TYPE, APP_ORIGIN, appResourceUri, declaresApps, isAppOnly } from "./apps-extension";
export {
  joinedText,
  isInputRequired,
  otherContentKinds,
  textResult,
  toolResultValue,
  toolValueAnswer,
  VALUE_CALL_SUFFIX,
  type ToolResultLike,
  type ToolValueAnswer,
} from "./result";
export { TokenBuckets, type BucketRate, type BucketRequest, type RateBuckets } from "./token-buckets";
export { STORE_FORMAT_VERSION, STORE_KEY_PATTERN, listed, visible, type Store, type StoreEntry, type StoreWriteOptions } from "./store";
export type { JobQueue } from "./job-queue";
export type { RecordTable } from "./record-table";
export type { SharedLists } from "./shared-lists";
export type { SharedSlots } from "./shared-slots";
export type { ShelfPut, ShelvedSkill, SkillShelf } from "./skill-shelf";
export type { JobShare } from "./job-share";
export {
  INSTANCE_ID_PATTERN,
  SHARED_STATE_DOWN,
  instanceOfId,
  instanceScopedId,
  isSharedStateDown,
  type InstanceDirectory,
  type SharedStateHealth,
} from "./instance";
export { estimateTokens, estimateTokensOfChars } from "./tokens";
export type { CatalogEntry, ToolAnnotations, ToolDefinition } from "./tool";
export type { PendingApproval, PinApprovals } from "./approvals";
export { sanitizeModelText } from "./scan/hidden";
export { SCAN_LIMITS, scanDefinitions, verdictAtLeast } from "./scan/scan";
export { scanSkillText, type SkillScan } from "./scan/skill";
export type {
  ScanFinding,
  ScanInput,
  ScanOptions,
  ScanOtherServer,
  ScanPromptDefinition,
  ScanReport,
  ScanResourceDefinition,
  ScanRule,
  ScanSeverity,
  ScanVerdict,
} from "./scan/types";
