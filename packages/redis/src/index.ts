export { RedisBuckets } from "./buckets";
export { RedisConnection, type RedisConnectionOptions } from "./connection";
export { RedisStateError, RedisUnavailableError, RedisUrlError, StoreFormatError, type RedisErrorCode } from "./errors";
export { importEntries, type ImportReport } from "./import";
export { RedisJobShare } from "./jobs";
export { RedisRecordTable } from "./records";
export { InstanceRegistry, type InstanceRegistryOptions } from "./instances";
export { DEFAULT_PREFIX, parseStoreSetting, redactUrl, type StoreSetting } from "./setting";
export { RedisStore, type RedisStoreOptions } from "./store";
