export { misbehavingEntry, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, modernServerPath, replayServerPath } from "./paths";
export { findProgram, freePort, haveProgram, startRedisServer, type RedisServer } from "./redis-server";
export { affinityConfig, startNginx, type Backend, type Nginx } from "./nginx";
