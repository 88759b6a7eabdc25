import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

/** The Node built-ins an entry loads, seen from a fresh process. */
function loadsChildProcess(file: string): boolean {
  const script = `const before = new Set(process.moduleLoadList);
await import(${JSON.stringify(dist(file))});
console.log(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m) && /child_process/.test(m)).length > 0));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim()) as boolean;
}

describe("entry points", () => {
  it("the root entry loads no child_process; @codemux/pool/stdio does", () => {
    expect(loadsChildProcess("index.js")).toBe(false);
    expect(loadsChildProcess("stdio.js")).toBe(true);
  });

  it("the root entry still exports what the server and CLI import", async () => {
    const root = await import(dist("index.js"));
    for (const name of [
      "ServerPool",
      "ServerUnavailableError",
      "ConfigError",
      "parseInlineServers",
      "loadConfigFile",
      "parseConfig",
      "DEFAULT_CALL_TIMEOUT_MS",
      "DEFAULT_CONNECT_TIMEOUT_MS",
      "interpolate",
      "markSelf",
    ]) {
      expect(root, name).toHaveProperty(name);
    }
    // The logger, the masking rule, the framing and the server name rule are @codemux/core's, exported once, there.
    for (const internal of [
      "silentLogger",
      "jsonRpcMessage",
      "SERVER_NAME_PATTERN",
      "maskUrl",
      "redactSecrets",
      "ChildProcessTransport",
      "StderrRing",
      "backoffDelay",
      "createToolFilter",
      "childEnvironment",
      "createTransport",
    ]) {
      expect(root, internal).not.toHaveProperty(internal);
    }
  });
});
