import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// The CLI is an executable, not a library: no declarations, a shebang kept from src/index.ts.
// The @codemux/* libraries are bundled in (they need not be on the registry for `npx codemux`
// to work); the sandbox worker is bundled as its own file next to index.js, where the
// sandbox looks for `./worker.js` relative to its own (now the CLI's) module.
// Third-party dependencies stay external: esbuild's native binary, the QuickJS WebAssembly
// and the default servers are found from the installed node_modules (see README).
export default defineConfig(
  packageBuild({
    entry: { index: "src/index.ts", worker: "../../packages/sandbox/dist/worker.js" },
    noExternal: [/^@codemux\//],
    dts: false,
    // What the bundle imports from outside, read by scripts/check-cli-deps.mjs (not shipped: see "files").
    metafile: true,
    esbuildOptions(options) {
      // The libraries' split builds import their shared chunks bare, for order only; they declare no side effects, so esbuild rightly drops those imports: no warning on every build.
      options.logOverride = { ...options.logOverride, "ignored-bare-import": "silent" };
    },
  }),
);
