import { afterAll, expect, it } from "vitest";
import { Codemux } from "../src/index";
import { config, servicesOf } from "./helpers";

// Replaces a global a module captures when it is evaluated: the bridge's ToolError extends Error.
const PATCH = "(globalThis as { Error: unknown }).Error = class Patched {};\nexport {};";
// The bridge is preloaded on the sandbox's fast path: pinned on (CI's lanes-off run turns it off everywhere else).
const core = new Codemux({ config: config({}), sandbox: { fastPath: true }, moduleSources: [(specifier) => (specifier === "mcp/patch" ? PATCH : undefined)] });
core.start();
afterAll(() => core.close());

it("builds the bridge into each run's engine before the run (evaluated before the snippet's own imports)", async () => {
  await core.ready();
  const code = 'import "mcp/patch";\nimport { ToolError } from "mcp/bridge";\nexport default Object.getPrototypeOf(ToolError).name;';
  for (let i = 0; i < 2; i++) expect(await servicesOf(core).snippets.execute(code, { session: core.session() })).toMatchObject({ ok: true, result: "Error" });
});
