export { misbehavingEntry, recordTasks, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, modernServerPath, replayServerPath, skillServerPath, taskServerPath } from "./paths";
export { findProgram, freePort, haveProgram, startRedisServer, type RedisServer } from "./redis-server";
export { affinityConfig, localNginxConfig, startNginx, type Backend, type Nginx } from "./nginx";
