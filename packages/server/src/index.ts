export { CatalogCache, CATALOG_CACHE_VERSION } from "./catalog-cache";
export { codemuxHome, findConfigFile, homeConfigFile, resolveConfig } from "./config";
export type { ConfigLocation, FindConfigOptions, ResolveConfigOptions } from "./config";
export { Codemux } from "./core";
export type { CodemuxOptions, ExecuteOptions, ModuleSource } from "./core";
export {
  BadRequestError,
  InvalidArgumentsError,
  ResultNotFoundError,
  ServerError,
  StoreError,
  UnknownMetaToolError,
} from "./errors";
export type { ServerErrorCode } from "./errors";
export { callTool as callToolMetaTool } from "./meta-tools/call-tool";
export { executeCode as executeCodeMetaTool } from "./meta-tools/execute-code";
export { readInput } from "./meta-tools/input";
export type { InputProperty, InputSchema } from "./meta-tools/input";
export { limitResult } from "./meta-tools/limit-result";
export { listModules as listModulesMetaTool, normalizeSpecifier, readModule as readModuleMetaTool } from "./meta-tools/modules";
export { readResult as readResultMetaTool } from "./meta-tools/read-result";
export { MetaToolRegistry, defineMetaTool } from "./meta-tools/registry";
export type { MetaTool, MetaToolContext } from "./meta-tools/registry";
export { searchTools as searchToolsMetaTool } from "./meta-tools/search-tools";
export type { SearchDetail, SearchRequest } from "./meta-tools/search-tools";
export { composeMiddleware } from "./pipeline/compose";
export { ToolCallPipeline } from "./pipeline/pipeline";
export type { ToolCallPipelineOptions } from "./pipeline/pipeline";
export { errorResult, executionResult, textResult } from "./render";
export type { BackgroundWork, JobRunner, TaskStoreFactory } from "./jobs";
export { McpFeatures } from "./mcp-features";
export { ClientRelay } from "./relay";
export { ResultStore } from "./results";
export type { KeptResult, ResultStoreOptions } from "./results";
export { createSessionServer } from "./session";
export type { SessionServerOptions } from "./session";
export { PROJECT_SKILLS_DIR, SkillLibrary, attachSkills, checkSkillName, typeCheckSkill } from "./skills/index";
export type { ListedSkill, Skill, SkillCheckResult, SkillLibraryOptions } from "./skills/index";
export { saveSkill as saveSkillMetaTool } from "./meta-tools/skills";
export { FileStore } from "./stores/file-store";
export type { FileStoreOptions } from "./stores/file-store";
export { MemoryStore } from "./stores/memory-store";
export type { Store, StoreEntry, StoreWriteOptions } from "./stores/store";
export { CODE_META_TOOLS, codeSurface } from "./surfaces/code";
export { DISPATCH_TOOL_NAME, dispatchSurface, dispatchTool } from "./surfaces/dispatch";
export type { DispatchRequest } from "./surfaces/dispatch";
export { BUILT_IN_SURFACES } from "./surfaces/index";
export { passthroughSurface } from "./surfaces/passthrough";
export type { Surface, SurfaceFactory } from "./surfaces/surface";
export type { ToolPool } from "./tool-pool";
export { ArgumentValidator } from "./validation";
export { VERSION } from "./version";
