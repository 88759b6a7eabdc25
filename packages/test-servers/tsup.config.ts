import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

export default defineConfig(packageBuild({ entry: ["src/index.ts", "src/misbehaving.ts", "src/replay.ts", "src/asking.ts", "src/modern.ts"] }));
