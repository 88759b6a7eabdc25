export { misbehavingEntry, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, modernServerPath, replayServerPath, skillServerPath } from "./paths";
