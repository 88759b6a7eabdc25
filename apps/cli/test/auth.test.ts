import { misbehavingServerPath } from "@codemux/test-servers";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeInBrowser, startProtectedServer, type ProtectedServer } from "../../../packages/pool/test/auth-fixture";

const cli = resolve(import.meta.dirname, "../dist/index.js");
let home: string;
let config: string;
let server: ProtectedServer;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "codemux-cli-auth-"));
  server = await startProtectedServer();
  config = join(home, "codemux.json");
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { p: { url: server.url, oauth: {} }, bad: { command: process.execPath, args: [misbehavingServerPath] } } }),
  );
});
afterAll(async () => {
  await server.close();
  rmSync(home, { recursive: true, force: true });
});

function start(args: string[], configFile = config): ChildProcess {
  // No DISPLAY: the login prints the URL and opens nothing.
  return spawn(process.execPath, [cli, "--no-cache", "--config", configFile, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, "data") },
  });
}

function codemux(args: string[], configFile = config): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = start(args, configFile);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d));
    child.stderr!.on("data", (d: Buffer) => (stderr += d));
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

/** `codemux auth login p`, the test playing the browser: reads the printed URL and follows it to the loopback callback. */
async function login(name = "p", configFile = config): Promise<{ code: number; stdout: string; page: string }> {
  const child = start(["auth", "login", name, "--no-open"], configFile);
  let stdout = "";
  let page = "";
  const exited = new Promise<number>((done) => child.on("close", (code) => done(code ?? -1)));
  await new Promise<void>((resolveUrl, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d;
      const url = /^ {2}(http:\/\/\S+)$/m.exec(stdout)?.[1];
      if (url && !page) {
        page = "pending";
        completeInBrowser(url).then((p) => {
          page = p.page;
          resolveUrl();
        }, reject);
      }
    });
    child.on("close", () => resolveUrl());
  });
  return { code: await exited, stdout, page };
}

describe("codemux auth", () => {
  // One story in steps, each a test of its own, in order: a CLI start costs seconds on a loaded machine.
  describe("login through the browser flow, a call with the token, a refresh after expiry, logout and needs login again", () => {
    let token: string;

    it("needs a login before the first", async () => {
      const before = await codemux(["list"]);
      expect(before.code).toBe(1);
      expect(before.stdout).toMatch(/^\s*p\s+failed\s+0 tools\s+needs login \(no login yet\): run `codemux auth login p`$/m);
      expect(before.stdout).toMatch(/^\s*bad\s+ready/m);
      expect((await codemux(["auth", "status"])).stdout).toBe("p  needs login: run codemux auth login p\n");
    });

    it("logs in through the browser flow and stores the login privately", async () => {
      const loggedIn = await login();
      expect(loggedIn.code).toBe(0);
      expect(loggedIn.stdout).toContain("Open this URL to log in to p (waiting up to 300 s):");
      expect(loggedIn.stdout).toMatch(/code_challenge_method=S256/);
      expect(loggedIn.stdout).toContain(`resource=${encodeURIComponent(server.url)}`);
      expect(loggedIn.stdout).toContain(
        `Logged in to p: logged in, access token expires in 60 min; refreshed automatically; client registered by dynamic client registration (DCR). Stored in ${join(home, "data", "auth", "p.json")}.`,
      );
      expect(loggedIn.page).toContain("codemux is logged in to p. You can close this tab.");
      expect(statSync(join(home, "data", "auth")).mode & 0o777).toBe(0o700);
      expect(statSync(join(home, "data", "auth", "p.json")).mode & 0o777).toBe(0o600);
      token = (JSON.parse(readFileSync(join(home, "data", "auth", "p.json"), "utf8")) as { tokens: { access_token: string } }).tokens.access_token;

      const status = await codemux(["auth", "status"]);
      expect(status.stdout).toBe(
        "p  logged in, access token expires in 60 min; refreshed automatically; client registered by dynamic client registration (DCR)\n",
      );
      expect(status.stdout).not.toContain(token);
    });

    it("calls with the token, and refreshes it after it expires", async () => {
      const called = await codemux(["call", "p__whoami"]);
      expect(called).toMatchObject({ code: 0 });
      expect(called.stdout).toMatch(/^client [\w-]+\n$/);
      expect(server.calls()).toBe(1);

      server.auth.expireAccessTokens();
      const afterExpiry = await codemux(["call", "p__whoami"]);
      expect(afterExpiry.stdout).toMatch(/^client [\w-]+\n$/);
      expect(server.auth.refreshes).toBe(1);
      expect(readFileSync(join(home, "data", "auth", "p.json"), "utf8")).not.toContain(token);
    });

    it("needs a login again once the login is revoked", async () => {
      server.auth.revokeAll();
      const revoked = await codemux(["list"]);
      expect(revoked.stdout).toMatch(/^\s*p\s+failed\s+0 tools\s+needs login \(the login expired and could not be refreshed\): run `codemux auth login p`$/m);
      expect(revoked.stdout).toMatch(/^\s*bad\s+ready/m);
    });

    it("logs in again and calls", async () => {
      expect((await login()).code).toBe(0);
      expect((await codemux(["call", "p__whoami"])).stdout).toMatch(/^client /);
    });

    it("logs out, once", async () => {
      const out = await codemux(["auth", "logout", "p"]);
      expect(out.stdout).toBe(`Logged out of p: deleted ${join(home, "data", "auth", "p.json")}.\n`);
      expect((await codemux(["auth", "logout", "p"])).stdout).toBe("p had no stored login.\n");
    });

    it("needs a login again after the logout", async () => {
      const refused = await codemux(["call", "p__whoami"]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('Server "p" is unavailable: needs login (no login yet): run `codemux auth login p`');
      const after = await codemux(["list"]);
      expect(after.stdout).toMatch(/^\s*p\s+failed\s+0 tools\s+needs login \(no login yet\): run `codemux auth login p`$/m);
    });
  });

  it("says which client codemux is at the authorization server: the configured client ID metadata document where it takes them (CIMD)", async () => {
    const document = "https://codemux.example.com/oauth/client.json";
    const cimd = await startProtectedServer({ metadataDocuments: { [document]: { client_name: "codemux", redirect_uris: ["http://127.0.0.1/callback"] } } });
    const file = join(home, "cimd.json");
    writeFileSync(file, JSON.stringify({ mcpServers: { c: { url: cimd.url, oauth: { clientMetadataUrl: document } } } }));
    try {
      expect((await login("c", file)).code).toBe(0);
      expect((await codemux(["auth", "status"], file)).stdout).toBe(
        `c  logged in, access token expires in 60 min; refreshed automatically; client id is the metadata document ${document} (CIMD)\n`,
      );
      expect(cimd.auth.registrations).toEqual([]);
    } finally {
      await cimd.close();
    }
  });

  it("refuses to log in to a stdio server or an unknown one", async () => {
    const stdio = await codemux(["auth", "login", "bad"]);
    expect(stdio).toMatchObject({ code: 2 });
    expect(stdio.stderr).toContain('"bad" is a stdio server; only HTTP servers log in with OAuth');
    const unknown = await codemux(["auth", "login", "nope"]);
    expect(unknown.stderr).toContain(`No server named "nope" in ${config} (HTTP servers: p)`);
  });

  it("opens the browser without a shell: xdg-open gets the authorization URL, & | ^ % and all, as its one argument", async () => {
    // An authorization server whose metadata puts characters a shell (or cmd.exe) interprets into its authorization URL.
    const metadata = createServer((request, response) => {
      if (request.url !== "/.well-known/oauth-authorization-server") return void response.writeHead(404).end();
      const base = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}`;
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          issuer: base,
          authorization_endpoint: `${base}/authorize;x=a&b|c^d%PATH%`,
          token_endpoint: `${base}/token`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"],
        }),
      );
    });
    await new Promise<void>((done) => metadata.listen(0, "127.0.0.1", done));
    const hostileConfig = join(home, "hostile.json");
    const url = `http://127.0.0.1:${(metadata.address() as AddressInfo).port}/mcp`;
    writeFileSync(hostileConfig, JSON.stringify({ mcpServers: { h: { url, oauth: { clientId: "codemux-test" } } } }));
    const bin = join(home, "bin");
    const seen = join(home, "xdg-open.log");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\necho "$#" > '${seen}'\nprintf '%s\\n' "$@" >> '${seen}'\n`, { mode: 0o755 });
    const child = spawn(process.execPath, [cli, "--config", hostileConfig, "auth", "login", "h", "--timeout", "2"], {
      cwd: home,
      env: { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: home, CODEMUX_HOME: join(home, "data"), DISPLAY: ":0" },
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    await once(child, "close");
    metadata.close();
    const printed = /^ {2}(http:\/\/\S+)$/m.exec(stdout)?.[1];
    expect(printed).toMatch(/\/authorize;x=a&b\|c\^d%PATH%\?/);
    expect(readFileSync(seen, "utf8")).toBe(`1\n${printed}\n`);
  });
});
