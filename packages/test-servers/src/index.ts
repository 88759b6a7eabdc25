export { misbehavingEntry, recordTasks, startConformanceFixture, startOverHttp, until } from "./helpers";
export {
  appHostScriptPath,
  appServerPath,
  askingServerPath,
  conformanceServerPath,
  conformanceTasksServerPath,
  misbehavingServerPath,
  modernServerPath,
  paramHeaderServerPath,
  replayServerPath,
  skillServerPath,
  taskServerPath,
} from "./paths";
export { findProgram, freePort, haveProgram, startRedisServer, type RedisServer } from "./redis-server";
export { affinityConfig, localNginxConfig, startNginx, type Backend, type Nginx } from "./nginx";
