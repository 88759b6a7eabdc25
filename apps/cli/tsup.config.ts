import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// The CLI is an executable, not a library: no declarations, a shebang kept from src/index.ts.
export default defineConfig(packageBuild({ dts: false }));
