import { describe, expect, it } from "vitest";
import { ConfigError, parseInlineServers } from "../src/index";

describe("inline servers", () => {
  it("parse seed 001's forms as written", () => {
    const config = parseInlineServers(
      [
        "--",
        "filesystem",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/path/to/dir",
        "--",
        "github",
        "--transport",
        "http",
        "https://api.github.com/mcp",
        "-H",
        "Authorization: Bearer token",
        "--",
        "local",
        "--transport",
        "stdio",
        "--",
        "node",
        "server.js",
      ],
      {},
    );
    expect(config.servers.map((s) => [s.name, s.transport.type])).toEqual([
      ["filesystem", "stdio"],
      ["github", "http"],
      ["local", "stdio"],
    ]);
    expect(config.servers[1]?.transport).toMatchObject({ url: "https://api.github.com/mcp", headers: { Authorization: "Bearer token" } });
  });

  it("take --env K=V and --cwd DIR per stdio server (seed 002's passthru)", () => {
    const config = parseInlineServers(["--", "py", "--env", "API_KEY=xxx", "--env", "MODE=a=b", "--cwd", "./my-server", "--", "python", "server.py"], {});
    expect(config.servers[0]?.transport).toMatchObject({ type: "stdio", command: "python", args: ["server.py"], env: { API_KEY: "xxx", MODE: "a=b" } });
    expect((config.servers[0]?.transport as { cwd?: string }).cwd).toMatch(/my-server$/);
  });

  it("refuse what they cannot mean, naming the server", () => {
    expect(() => parseInlineServers(["--", "x", "--env", "NOEQUALS", "--", "node"], {})).toThrow(ConfigError);
    expect(() => parseInlineServers(["--", "x", "--transport", "ftp", "u"], {})).toThrow(/--transport takes "stdio", "http" or "sse"/);
    expect(() => parseInlineServers(["--", "x", "-H", "A: b", "--", "node"], {})).toThrow(/need --transport http or sse/);
  });
});
