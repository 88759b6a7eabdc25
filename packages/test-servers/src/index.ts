export { misbehavingEntry, until } from "./helpers";
export { askingServerPath, misbehavingServerPath, replayServerPath } from "./paths";
