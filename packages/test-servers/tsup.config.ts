import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

const servers = {
  index: "src/index.ts",
  misbehaving: "src/misbehaving.ts",
  replay: "src/replay.ts",
  asking: "src/asking.ts",
  modern: "src/modern.ts",
  "skill-server": "src/skill-server.ts",
  "task-server": "src/task-server.ts",
  "param-headers": "src/param-headers.ts",
};

export default defineConfig(
  packageBuild({
    entry: { ...servers, "conformance-everything-server": "vendor/conformance-everything-server.ts" },
    // The vendored conformance fixture stays as upstream wrote it, so it gets no types (and no type check).
    dts: { entry: servers },
  }),
);
