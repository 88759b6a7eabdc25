import { describe, expect, it } from "vitest";
import { redactConfig } from "./redact";

describe("redactConfig", () => {
  it("masks env and header values, secret-named keys and secrets in strings of a client config, keeping ${VAR} references", () => {
    const config = {
      globalShortcut: "Ctrl+Space",
      mcpServers: {
        gh: {
          command: "npx",
          args: ["-y", "server-github", "--token=SECRET1"],
          env: { GITHUB_PERSONAL_ACCESS_TOKEN: "SECRET2", DEBUG: "1", FROM: "${GH_TOKEN}" },
        },
        api: {
          url: "https://x.dev/mcp?apikey=SECRET3",
          headers: { Authorization: "Bearer SECRET4", "X-Tenant": "SECRET5" },
          oauth: { clientSecret: "SECRET6" },
        },
      },
      projects: { "/work": { mcpServers: { deep: { command: "x", env: { KEY: "SECRET7" } } } } },
    };
    const masked = redactConfig(config);
    for (let i = 1; i <= 7; i++) expect(JSON.stringify(masked)).not.toContain(`SECRET${i}`);
    expect(masked).toEqual({
      globalShortcut: "Ctrl+Space",
      mcpServers: {
        gh: { command: "npx", args: ["-y", "server-github", "--token=***"], env: { GITHUB_PERSONAL_ACCESS_TOKEN: "***", DEBUG: "***", FROM: "${GH_TOKEN}" } },
        api: { url: "https://x.dev/mcp?apikey=***", headers: { Authorization: "***", "X-Tenant": "***" }, oauth: { clientSecret: "***" } },
      },
      projects: { "/work": { mcpServers: { deep: { command: "x", env: { KEY: "***" } } } } },
    });
  });

  it("masks a hostile, deeply nested value whole instead of walking it", () => {
    let deep: unknown = "SECRET";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(JSON.stringify(redactConfig({ env: "plain", nested: deep })).length).toBeLessThan(400);
  });
});
