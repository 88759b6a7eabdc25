import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// The peers section's client threads run their own entry (a worker thread loads a file).
export default defineConfig(packageBuild({ dts: false, entry: ["src/index.ts", "src/peers-worker.ts"] }));
