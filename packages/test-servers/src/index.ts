export { misbehavingEntry, recordTasks, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, modernServerPath, replayServerPath, skillServerPath, taskServerPath } from "./paths";
