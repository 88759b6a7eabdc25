import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// The worker is its own entry: the pool starts it by URL, next to index.js in dist.
export default defineConfig(packageBuild({ entry: ["src/index.ts", "src/worker.ts"] }));
