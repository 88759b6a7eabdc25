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
  "conformance-tasks-server": "src/conformance-tasks-server.ts",
  "param-headers": "src/param-headers.ts",
  "app-server": "src/app-server.ts",
};

export default defineConfig([
  packageBuild({
    entry: { ...servers, "conformance-everything-server": "vendor/conformance-everything-server.ts" },
    // The vendored conformance fixture stays as upstream wrote it, so it gets no types (and no type check).
    dts: { entry: servers },
  }),
  // The app server's view and the browser tests' host page, for the browser: one script each, everything inside.
  {
    entry: { "app-view": "src/apps/view.ts", "app-host": "src/apps/host.ts" },
    format: ["iife"],
    platform: "browser",
    target: "es2022",
    outDir: "dist",
    noExternal: [/.*/],
    clean: false,
    minify: true,
  },
]);
