import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.shared";

// The CLI is an executable, not a library: no declarations, a shebang kept from src/index.ts.
// The @codemux/* libraries are bundled in (they need not be on the registry for `npx codemux`
// to work); the sandbox worker is bundled as its own file next to index.js, where the
// sandbox looks for `./worker.js` relative to its own (now the CLI's) module.
// Third-party dependencies are bundled too: Node 20 has no compile cache for ES modules, and
// resolving, reading and compiling ~150 files of node_modules at each start cost ~35 % of it
// (docs/perf/cli-start.md). Left outside (still dependencies): what is found on disk by name or
// path (esbuild's native binary, the QuickJS WebAssembly, typescript for save_skill, the default
// servers), and what only some runs load with import() (Redis's clients, the tracing SDK).
const OUTSIDE = String.raw`(esbuild|typescript|@jitl/|quickjs-emscripten-core|ioredis|bullmq|@opentelemetry/(?!api$))`;
export default defineConfig(
  packageBuild({
    entry: { index: "src/index.ts", worker: "../../packages/sandbox/dist/worker.js" },
    noExternal: [new RegExp(`^(?!node:|${OUTSIDE})`)],
    external: [new RegExp(`^${OUTSIDE}`)],
    // The CommonJS packages bundled in call require() for Node's own modules.
    banner: { js: 'import { createRequire as __cliCreateRequire } from "node:module"; const require = __cliCreateRequire(import.meta.url);' },
    dts: false,
    // What the bundle imports from outside, read by scripts/check-cli-deps.mjs (not shipped: see "files").
    metafile: true,
    esbuildOptions(options) {
      // The libraries' split builds import their shared chunks bare, for order only; they declare no side effects, so esbuild rightly drops those imports: no warning on every build.
      options.logOverride = { ...options.logOverride, "ignored-bare-import": "silent" };
    },
  }),
);
