import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors";
import { parseInlineServers } from "./inline";
import { interpolate } from "./interpolate";
import { parseConfig } from "./load";

const parse = (value: unknown, env: NodeJS.ProcessEnv = {}) =>
  parseConfig(typeof value === "string" ? value : JSON.stringify(value), { file: "/home/u/codemux.json", env });
const errorOf = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
};

describe("parseConfig", () => {
  it("reads mcpServers with stdio, http and sse entries and applies defaults", () => {
    const config = parse({
      mcpServers: {
        fs: { command: "npx", args: ["-y", "server-filesystem", "."], env: { X: "1" } },
        remote: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer t" }, callTimeoutMs: 5000 },
        legacy: { type: "sse", url: "http://localhost:8080/sse" },
        implied: { url: "https://example.com/other" },
      },
    });
    expect(config.servers.map((s) => [s.name, s.transport.type])).toEqual([
      ["fs", "stdio"],
      ["remote", "http"],
      ["legacy", "sse"],
      ["implied", "http"],
    ]);
    expect(config.servers[0]).toMatchObject({
      transport: { command: "npx", args: ["-y", "server-filesystem", "."], env: { X: "1" } },
      callTimeoutMs: 60000,
      connectTimeoutMs: 30000,
    });
    expect(config.servers[1]).toMatchObject({ callTimeoutMs: 5000, transport: { headers: { Authorization: "Bearer t" } } });
  });

  it("reads the VS Code `servers` key and skips disabled entries", () => {
    const config = parse({ servers: { a: { type: "stdio", command: "a" }, b: { command: "b", disabled: true } } });
    expect(config.servers.map((s) => s.name)).toEqual(["a"]);
  });

  it("replaces ${VAR} and ${VAR:-default} everywhere, and marks a server whose variable is unset", () => {
    const config = parse(
      {
        mcpServers: {
          a: { command: "${BIN}", args: ["--home=${HOME}", "${MISSING:-fallback}"], env: { TOKEN: "${TOKEN}" }, cwd: "${HOME}/x" },
          b: { type: "http", url: "https://${HOST}/mcp", headers: { Authorization: "Bearer ${SECRET}" } },
        },
      },
      { BIN: "node", HOME: "/home/u", TOKEN: "t0k", HOST: "example.com" },
    );
    expect(config.servers[0]!.transport).toEqual({
      type: "stdio",
      command: "node",
      args: ["--home=/home/u", "fallback"],
      env: { TOKEN: "t0k" },
      cwd: "/home/u/x",
    });
    expect(config.servers[0]!.problem).toBeUndefined();
    expect(config.servers[1]!.problem).toMatch(/SECRET is not set/);
  });

  it("names the file, line and column of a JSON syntax error", () => {
    const error = errorOf(() => parse('{\n  "mcpServers": {\n    "a": { "command": "x" "args": [] }\n  }\n}'));
    expect(error.message).toBe('Invalid config /home/u/codemux.json: JSON syntax error at line 3, column 27: expected "," or "}" after a value, found this.');
  });

  it("reads JSONC (VS Code's mcp.json): comments and trailing commas", () => {
    const config = parse('{\n  // mine\n  "servers": {\n    "a": { "command": "x", /* no args */ },\n  },\n}');
    expect(config.servers.map((s) => s.transport)).toEqual([{ type: "stdio", command: "x", args: [], env: {} }]);
  });

  it.each([
    [{}, /top level: expected a "mcpServers"/],
    [{ mcpServers: [] }, /mcpServers: expected an object/],
    [{ mcpServers: { fs: { args: ["x"] } } }, /mcpServers\.fs\.command: required/],
    [{ mcpServers: { fs: { command: "x", args: "y" } } }, /mcpServers\.fs\.args: expected array/],
    [{ mcpServers: { fs: { command: "x", env: { A: 1 } } } }, /mcpServers\.fs\.env\.A: expected string/],
    [{ mcpServers: { fs: { command: "x", callTimeoutMs: -1 } } }, /mcpServers\.fs\.callTimeoutMs: /],
    [{ mcpServers: { fs: { command: "x", tools: { allow: "a" } } } }, /mcpServers\.fs\.tools\.allow: expected array/],
    [{ mcpServers: { r: { type: "http", url: "ftp://x" } } }, /mcpServers\.r\.url: must be an http\(s\) URL/],
    [{ mcpServers: { r: { type: "websocket", url: "ws://x" } } }, /mcpServers\.r\.type: unknown transport "websocket"/],
    [{ mcpServers: { r: { type: "http" } } }, /mcpServers\.r\.url: required$/],
    [{ mcpServers: { a__b: { command: "x" } } }, /mcpServers\.a__b: a server name may hold/],
    [{ mcpServers: { "has space": { command: "x" } } }, /mcpServers\.has space: a server name/],
  ])("rejects %j with a message naming the field", (value, pattern) => {
    const error = errorOf(() => parse(value));
    expect(error.message).toMatch(/^Invalid config \/home\/u\/codemux\.json: /);
    expect(error.message).toMatch(pattern);
  });

  it.each([
    [
      { mcpServer: { fs: { command: "x" } } },
      'top level: expected a "mcpServers" (or "servers") object listing the servers; did you mean "mcpServers" instead of "mcpServer"?',
    ],
    [{ server: { fs: { command: "x" } } }, 'did you mean "servers" instead of "server"?'],
    [
      { mcpServers: { fs: { comand: "npx", args: ["x"] } } },
      'mcpServers.fs.command: required (or give "url" for an HTTP server); did you mean "command" instead of "comand"?',
    ],
    [{ mcpServers: { r: { URL: "https://x.dev/mcp" } } }, 'did you mean "url" instead of "URL"?'],
    [{ mcpServers: { r: { type: "http", ulr: "https://x.dev/mcp" } } }, 'mcpServers.r.url: required; did you mean "url" instead of "ulr"?'],
    [
      { mcpServers: { r: { type: "htp", url: "https://x.dev/mcp" } } },
      'mcpServers.r.type: unknown transport "htp" (did you mean "http"?); use "stdio", "http" or "sse"',
    ],
    [{ mcpServers: { fs: { command: "x", tools: { alow: ["a"] } } } }, 'mcpServers.fs.tools: unknown key "alow" (did you mean "allow"?); it takes allow, deny'],
    [{ mcpServers: { r: { url: "https://x.dev/mcp", oauth: { clientID: "a" } } } }, 'mcpServers.r.oauth: unknown key "clientID" (did you mean "clientId"?)'],
  ])("answers the near miss %j of a known key with a did-you-mean", (value, sentence) => {
    expect(errorOf(() => parse(value)).message).toContain(sentence);
  });

  it("ignores keys other clients add", () => {
    const config = parse({ mcpServers: { a: { command: "x", autoApprove: [], alwaysAllow: ["y"] } }, inputs: [] });
    expect(config.servers).toHaveLength(1);
  });
});

describe("interpolate", () => {
  it("treats an empty variable like an unset one when a default is given", () => {
    expect(interpolate("${A:-d}", { A: "" }).value).toBe("d");
    expect(interpolate("$HOME ${A}", { A: "x" })).toEqual({ value: "$HOME x", missing: [], unsupported: [] });
  });
});

describe("parseInlineServers", () => {
  it("parses stdio and http servers separated by --", () => {
    const config = parseInlineServers(
      ["--", "fs", "--", "npx", "-y", "server-filesystem", ".", "--", "remote", "--transport", "http", "https://x.dev/mcp", "-H", "Authorization: Bearer a:b"],
      {},
    );
    expect(config.source).toBe("inline");
    expect(config.servers[0]).toMatchObject({ name: "fs", transport: { type: "stdio", command: "npx", args: ["-y", "server-filesystem", "."] } });
    expect(config.servers[1]).toMatchObject({
      name: "remote",
      transport: { type: "http", url: "https://x.dev/mcp", headers: { Authorization: "Bearer a:b" } },
    });
  });

  it.each([
    [["--", "fs"], /expected "-- COMMAND ARGS\.\.\."/],
    [["--", "r", "--transport", "ws", "x"], /--transport takes "stdio", "http" or "sse", not "ws"/],
    [["--", "r", "--transport", "http", "https://x", "-H", "nocolon"], /must look like "Name: value"/],
    [["--", "bad__name", "--", "x"], /a server name may hold/],
  ])("rejects %j", (argv, pattern) => {
    expect(() => parseInlineServers(argv, {})).toThrow(pattern);
  });
});

describe("config warnings", () => {
  it("warns about unknown keys with a did-you-mean, and says what an ignored `arg` means", () => {
    const config = parse({
      mcpServers: {
        fs: { command: "npx", arg: ["-y", "server-filesystem"] },
        off: { command: "x", disabeld: true },
        slow: { command: "x", callTimeoutMS: 5000 },
        web: { url: "https://x.dev/mcp", command2: "y", headrs: { A: "b" } },
      },
    });
    expect(config.warnings).toEqual([
      '/home/u/codemux.json: mcpServers.fs: unknown key "arg" is ignored (did you mean "args"?); without "args" the server runs "npx" with no arguments, which may start something that never answers.',
      '/home/u/codemux.json: mcpServers.off: unknown key "disabeld" is ignored (did you mean "disabled"?); the server is started.',
      '/home/u/codemux.json: mcpServers.slow: unknown key "callTimeoutMS" is ignored (did you mean "callTimeoutMs"?).',
      '/home/u/codemux.json: mcpServers.web: unknown key "command2" is ignored (did you mean "command"?).',
      '/home/u/codemux.json: mcpServers.web: unknown key "headrs" is ignored (did you mean "headers"?).',
    ]);
    expect(config.servers[0]!.warnings).toHaveLength(1);
  });

  it("accepts other clients' keys quietly", () => {
    const entry = {
      command: "x",
      type: "stdio",
      description: "d",
      alwaysAllow: [],
      autoApprove: [],
      timeout: 5,
      envFile: ".env",
      trust: true,
      includeTools: [],
      excludeTools: [],
      disabledTools: [],
      oauth: {},
      transport: "stdio",
      lazy: true,
    };
    expect(parse({ mcpServers: { a: entry } }).warnings).toEqual([]);
  });

  it("reads Windsurf's serverUrl and the proxy and refresh keys", () => {
    const config = parse({
      mcpServers: { w: { serverUrl: "https://x.dev/mcp", proxy: false, refreshIntervalMs: 0 }, p: { url: "https://y.dev/mcp", proxy: "http://corp:3128" } },
    });
    expect(config.servers[0]).toMatchObject({ transport: { type: "http", url: "https://x.dev/mcp", proxy: false }, refreshIntervalMs: 0 });
    expect(config.servers[1]!.transport).toMatchObject({ proxy: "http://corp:3128" });
    expect(() => parse({ mcpServers: { p: { url: "https://y.dev/mcp", proxy: "socks5://x" } } })).toThrow(
      /mcpServers\.p\.proxy: must be an http\(s\) proxy URL or false/,
    );
  });

  it("reads a tls block: files relative to the config's folder, ${VAR} expanded, a certificate only with its key", () => {
    const config = parse(
      { mcpServers: { s: { url: "https://corp.example/mcp", tls: { ca: "certs/ca.pem", cert: "${CERTS}/me.pem", key: "/abs/me-key.pem" } } } },
      { CERTS: "/etc/codemux" },
    );
    expect(config.servers[0]!.transport).toMatchObject({ tls: { ca: "/home/u/certs/ca.pem", cert: "/etc/codemux/me.pem", key: "/abs/me-key.pem" } });
    expect(() => parse({ mcpServers: { s: { url: "https://corp.example/mcp", tls: { cert: "me.pem" } } } })).toThrow(
      /mcpServers\.s\.tls: cert and key go together/,
    );
    expect(() => parse({ mcpServers: { s: { url: "https://corp.example/mcp", tls: { ca: "a.pem", verify: false } } } })).toThrow(/mcpServers\.s\.tls/);
  });
});

describe("single-server files", () => {
  const parseFile = (value: unknown, file: string) => parseConfig(JSON.stringify(value), { file, env: {} });

  it("reads a file whose top level is one server, named after the file or its name field", () => {
    const stdio = parseFile({ type: "stdio", command: "node", args: ["server.js"] }, "/home/u/ev-server.json");
    expect(stdio.servers).toMatchObject([{ name: "ev-server", transport: { type: "stdio", command: "node", args: ["server.js"] } }]);
    expect(stdio.warnings).toEqual([]);
    const http = parseFile({ name: "remote", type: "streamableHttp", url: "https://x.dev/mcp" }, "/home/u/server.json");
    expect(http.servers).toMatchObject([{ name: "remote", transport: { type: "http", url: "https://x.dev/mcp" } }]);
    expect(parseFile({ url: "http://localhost:8080/sse", type: "sse" }, "C:\\mcp\\legacy.json").servers[0]).toMatchObject({ name: "legacy" });
  });

  it("names the field alone in a single server's errors, and asks for a name when the file's is not a server name", () => {
    expect(errorOf(() => parseFile({ command: "node", args: "server.js" }, "/home/u/server.json")).message).toBe(
      "Invalid config /home/u/server.json: args: expected array, received string",
    );
    expect(errorOf(() => parseFile({ type: "http" }, "/home/u/server.json")).message).toBe("Invalid config /home/u/server.json: url: required");
    expect(errorOf(() => parseFile({ command: "node" }, "/home/u/my server.json")).message).toBe(
      'Invalid config /home/u/my server.json: top level: the file holds one server, which is named after the file, but "my server" is not a server name; add a "name" field (letters, digits, "-" and single "_")',
    );
    expect(errorOf(() => parseFile({ name: "a__b", command: "node" }, "/home/u/s.json")).message).toMatch(/: name: a server name may hold/);
  });
});

describe("isolation", () => {
  it("reads isolation (shared is the default and leaves the entry as today) and maxInstances, and refuses other values", () => {
    const config = parse({
      mcpServers: {
        browser: { command: "b", isolation: "session", maxInstances: 4 },
        memory: { command: "m", isolation: "principal" },
        fs: { command: "f", isolation: "shared" },
      },
    });
    expect(config.servers.map((s) => [s.isolation, s.maxInstances])).toEqual([
      ["session", 4],
      ["principal", undefined],
      [undefined, undefined],
    ]);
    expect(errorOf(() => parse({ mcpServers: { b: { command: "b", isolation: "user" } } })).message).toMatch(/mcpServers\.b\.isolation: /);
    expect(errorOf(() => parse({ mcpServers: { b: { command: "b", maxInstances: 0 } } })).message).toMatch(/mcpServers\.b\.maxInstances: /);
  });
});

describe("protocol", () => {
  it("reads a pin to 2025-11-25 (auto is the default and leaves the entry as today), and refuses other values", () => {
    const config = parse({ mcpServers: { old: { command: "o", protocol: "2025-11-25" }, found: { command: "f", protocol: "auto" }, plain: { command: "p" } } });
    expect(config.servers.map((s) => s.protocol)).toEqual(["2025-11-25", undefined, undefined]);
    expect(errorOf(() => parse({ mcpServers: { b: { command: "b", protocol: "2026" } } })).message).toMatch(/mcpServers\.b\.protocol: /);
  });
});

describe("credentials", () => {
  it("reads per-principal credentials (a server per principal unless the entry says per session) and each principal's env and headers", () => {
    const config = parse(
      {
        mcpServers: {
          gh: {
            url: "https://x.dev/mcp",
            credentials: "per-principal",
            // A bare name is the token's, as everywhere a principal is named.
            perPrincipal: { "token:alice": { headers: { "X-Key": "${ALICE_KEY}" } }, bob: { headers: { "X-Key": "k-bob" } } },
          },
          browser: { command: "b", credentials: "per-principal", isolation: "session" },
        },
      },
      { ALICE_KEY: "k-alice" },
    );
    expect(config.servers.map((s) => [s.credentials, s.isolation])).toEqual([
      ["per-principal", "principal"],
      ["per-principal", "session"],
    ]);
    expect(config.servers[0]?.perPrincipal).toEqual({ "token:alice": { headers: { "X-Key": "k-alice" } }, "token:bob": { headers: { "X-Key": "k-bob" } } });
    expect(errorOf(() => parse({ mcpServers: { b: { command: "b", credentials: "per-principal", isolation: "shared" } } })).message).toMatch(
      /mcpServers\.b\.isolation: cannot be "shared" with "credentials": "per-principal"/,
    );
    expect(errorOf(() => parse({ mcpServers: { b: { command: "b", perPrincipal: { "token:a": { env: {} } } } } })).message).toMatch(
      /mcpServers\.b\.perPrincipal: is read only with "credentials": "per-principal"/,
    );
  });
});

describe("client variables", () => {
  it("reads a server's roots as file:// URIs, relative paths against the config's folder, and refuses other schemes", () => {
    const config = parse(
      {
        mcpServers: {
          fs: { command: "fs", roots: ["data", "/srv/shared", "file:///srv/other%20folder", "${HOME}/notes"] },
          remote: { url: "https://x.dev/mcp" },
        },
      },
      { HOME: "/home/u" },
    );
    expect(config.servers[0]?.roots).toEqual(["file:///home/u/data", "file:///srv/shared", "file:///srv/other%20folder", "file:///home/u/notes"]);
    expect(config.servers[1]?.roots).toBeUndefined();
    expect(errorOf(() => parse({ mcpServers: { fs: { command: "fs", roots: ["https://evil.example/"] } } })).message).toBe(
      "Invalid config /home/u/codemux.json: mcpServers.fs.roots.0: must be a folder path or a file:// URI",
    );
    expect(errorOf(() => parse({ mcpServers: { fs: { command: "fs", roots: "data" } } })).message).toMatch(/mcpServers\.fs\.roots: .*array/);
  });

  it("expands ${env:NAME}, ${userHome} and ${workspaceFolder} (the config's folder)", () => {
    const config = parse(
      {
        mcpServers: {
          a: { command: "${userHome}/bin/s", args: ["${workspaceFolder}/data", "${env:TOKEN}", "${workspaceFolderBasename}"], env: { T: "${env:TOKEN}" } },
        },
      },
      { TOKEN: "t0k", HOME: "/home/u" },
    );
    expect(config.servers[0]!.transport).toMatchObject({ command: "/home/u/bin/s", args: ["/home/u/data", "t0k", "u"], env: { T: "t0k" } });
    expect(parse({ mcpServers: { a: { command: "x", env: { T: "${env:NOPE}" } } } }).servers[0]!.problem).toMatch(/NOPE is not set/);
  });

  it("takes ${workspaceFolder} of a file in .vscode to be the folder that holds .vscode", () => {
    const text = JSON.stringify({ servers: { a: { command: "s", args: ["${workspaceFolder}/data", "${workspaceFolderBasename}"], roots: ["docs"] } } });
    const config = parseConfig(text, { file: "/home/u/proj/.vscode/mcp.json", env: {} });
    expect(config.servers[0]!.transport).toMatchObject({ args: ["/home/u/proj/data", "proj"] });
    expect(config.servers[0]!.roots).toEqual(["file:///home/u/proj/docs"]);
  });

  it.each([
    [
      { command: "x", env: { TOKEN: "${input:github_token}" } },
      /mcpServers\.a\.env\.TOKEN: \$\{input:github_token\} is an input prompt of VS Code, which codemux cannot show/,
    ],
    [{ command: "x", args: ["--x", "${command:pickFile}"] }, /mcpServers\.a\.args\.1: \$\{command:pickFile\} asks the editor \(command\)/],
    [{ url: "https://x.dev/${config:server.path}" }, /mcpServers\.a\.url: \$\{config:server\.path\} asks the editor/],
    [{ command: "${workspaceFolder:api}/s" }, /mcpServers\.a\.command: \$\{workspaceFolder:api\} is not a variable codemux knows/],
  ])("refuses %j by name instead of passing it on", (entry, pattern) => {
    expect(() => parse({ mcpServers: { a: entry } })).toThrow(pattern);
  });
});
