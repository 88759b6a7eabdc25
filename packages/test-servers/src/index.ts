export { misbehavingEntry, recordTasks, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, modernServerPath, replayServerPath, taskServerPath } from "./paths";
