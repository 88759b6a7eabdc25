import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseHttpSettings } from "./settings";

describe("the http section of a config file", () => {
  it("reads trusted proxies and the limits per address and per principal", () => {
    const config = {
      mcpServers: {},
      http: {
        trustedProxies: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"],
        limits: { connectionsPerAddress: 8, perPrincipal: { sessions: 10, jobs: 4 }, principals: { ci: { sessions: 40 }, bot: { jobs: 1 } } },
      },
    };
    expect(parseHttpSettings(config, "codemux.json")).toEqual({
      trustedProxies: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"],
      maxConnectionsPerAddress: 8,
      maxSessionsPerPrincipal: 10,
      maxJobsPerPrincipal: 4,
      principalLimits: { "token:ci": { sessions: 40 }, "token:bot": { jobs: 1 } },
    });
    expect(parseHttpSettings({ mcpServers: {} })).toEqual({});
  });

  it("reads the README's example as it says", () => {
    const readme = readFileSync(join(import.meta.dirname, "../README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Limits per principal and per address"));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(parseHttpSettings(JSON.parse(example), "README.md")).toEqual({
      trustedProxies: ["127.0.0.1"],
      maxConnectionsPerAddress: 256,
      maxSessionsPerPrincipal: 25,
      maxJobsPerPrincipal: 12,
      principalLimits: { "token:ci": { sessions: 60, jobs: 30 } },
    });
  });

  it("reads the public URL and the OAuth section, and refuses OAuth without a public URL", () => {
    const oauth = { issuer: "https://login.example.com", audience: "https://codemux.example.com", requiredScopes: ["mcp"], groupsClaim: "roles" };
    expect(parseHttpSettings({ http: { publicUrl: "https://codemux.example.com", oauth } }, "c.json")).toEqual({
      publicUrl: "https://codemux.example.com",
      oauth: { ...oauth, audience: ["https://codemux.example.com"] },
    });
    expect(() => parseHttpSettings({ http: { oauth } }, "c.json")).toThrow("Invalid config c.json: http.oauth: needs http.publicUrl");
    expect(() => parseHttpSettings({ http: { publicUrl: "https://c.example", oauth: { isuser: "x" } } }, "c.json")).toThrow(
      'http.oauth.isuser: unknown setting (did you mean "issuer"?)',
    );
    expect(() => parseHttpSettings({ http: { publicUrl: "codemux.example.com" } }, "c.json")).toThrow("http.publicUrl: expected an http(s) URL");
    expect(() => parseHttpSettings({ http: { publicUrl: "https://example.com/codemux" } }, "c.json")).toThrow(
      "http.publicUrl: must be an origin without a path",
    );
  });

  it("reads the README's OAuth example as it says", () => {
    const readme = readFileSync(join(import.meta.dirname, "../README.md"), "utf8");
    const section = readme.slice(readme.indexOf("### OAuth 2.1 on"));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(parseHttpSettings(JSON.parse(example), "README.md")).toEqual({
      publicUrl: "https://codemux.example.com",
      oauth: { issuer: "https://login.example.com", scopesSupported: ["mcp", "admin", "metrics"], requiredScopes: ["mcp"], groupsClaim: "groups" },
    });
  });

  it("names the file and the field of a mistake, with a did-you-mean", () => {
    const bad: Array<[unknown, string]> = [
      [
        { limits: { perPrinciple: {} } },
        'Invalid config c.json: http.limits.perPrinciple: unknown setting (did you mean "perPrincipal"?); http.limits takes connectionsPerAddress, perPrincipal, principals',
      ],
      [
        { limits: { perPrincipal: { sessions: 0 } } },
        "Invalid config c.json: http.limits.perPrincipal.sessions: expected a whole number of at least 1 (got 0)",
      ],
      [
        { limits: { principals: { ci: { session: 3 } } } },
        'Invalid config c.json: http.limits.principals.ci.session: unknown setting (did you mean "sessions"?); http.limits.principals.ci takes sessions, jobs',
      ],
      [
        { trustedProxies: "127.0.0.1" },
        'Invalid config c.json: http.trustedProxies: expected a list of addresses or CIDR ranges, e.g. ["127.0.0.1", "10.0.0.0/8"]',
      ],
      [
        { trustedProxies: ["10.0.0.0/33"] },
        'Invalid config c.json: http.trustedProxies: Trusted proxy "10.0.0.0/33" is not an IP address or a CIDR range; write one such as 127.0.0.1 or 10.0.0.0/8.',
      ],
      [{ trustedProxies: ["proxy.internal"] }, 'Trusted proxy "proxy.internal" is not an IP address'],
    ];
    for (const [http, message] of bad) expect(() => parseHttpSettings({ http }, "c.json")).toThrow(message);
  });
});
