import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// Two entries sharing chunks: the root must not pull in the stdio entry's child_process.
export default defineConfig(packageBuild({ entry: ["src/index.ts", "src/stdio.ts"], splitting: true }));
