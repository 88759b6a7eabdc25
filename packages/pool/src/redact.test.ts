import { describe, expect, it } from "vitest";
import { maskUrl, redactConfig, redactSecrets } from "./redact";

describe("maskUrl", () => {
  it("masks credentials and secret query parameters, keeping the rest readable", () => {
    expect(maskUrl("https://user:pa55@x.dev/mcp?apikey=s3cr3t&v=1&Token=abc&sig=z&api_key=k&access_token=a&key=b&secret=c&password=d")).toBe(
      "https://***:***@x.dev/mcp?apikey=***&v=1&Token=***&sig=***&api_key=***&access_token=***&key=***&secret=***&password=***",
    );
    expect(maskUrl("http://localhost:3000/mcp?page=2")).toBe("http://localhost:3000/mcp?page=2");
  });
});

describe("redactSecrets", () => {
  it("masks URLs, key=value pairs, secret flags and bearer credentials inside text", () => {
    const text =
      "cannot reach https://x.dev/mcp?api_key=SECRET1. token=SECRET2&x=1 --api-key SECRET3 --token=SECRET4 Authorization: Bearer SECRET5abc, http://a:SECRET6@h/p";
    const masked = redactSecrets(text);
    for (let i = 1; i <= 6; i++) expect(masked).not.toContain(`SECRET${i}`);
    expect(masked).toBe("cannot reach https://x.dev/mcp?api_key=***. token=***&x=1 --api-key *** --token=*** Authorization: Bearer ***, http://***:***@h/p");
    expect(redactSecrets("npx -y @modelcontextprotocol/server-filesystem /tmp")).toBe("npx -y @modelcontextprotocol/server-filesystem /tmp");
    expect(redactSecrets("npx -y server-github ghp_0123456789abcdefghijABCDEFGHIJ")).toBe("npx -y server-github ***");
  });
});

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
