// The worker when codemux runs from sources (`pnpm dev:cli`): Node 20 workers do not inherit tsx's
// hooks from the main thread, so this registers them before loading the TypeScript worker beside it.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
