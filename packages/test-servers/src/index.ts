import { fileURLToPath } from "node:url";

/** Absolute path of the built misbehaving server (run it with `node`). */
export const misbehavingServerPath: string = fileURLToPath(new URL("./misbehaving.js", import.meta.url));

/** Absolute path of the built catalog replay server (run it with `node PATH CATALOG.json`). */
export const replayServerPath: string = fileURLToPath(new URL("./replay.js", import.meta.url));
