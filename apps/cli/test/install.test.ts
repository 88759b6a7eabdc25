import { misbehavingServerPath } from "@codemux/test-servers";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clientConfigPath, codemuxEntry } from "../src/commands/install";
import { isCodemuxEntry } from "../src/move-plan";
import { cli, runCli } from "./run-cli";

const homes: string[] = [];
afterAll(() => homes.forEach((h) => rmSync(h, { recursive: true, force: true })));

function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), "codemux-install-"));
  homes.push(home);
  return home;
}

function envOf(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    APPDATA: join(home, "AppData", "Roaming"),
    XDG_CONFIG_HOME: join(home, ".config"),
    CODEMUX_HOME: join(home, ".codemux"),
  };
}

const codemux = (home: string, args: string[]) => runCli(args, { cwd: home, env: envOf(home) });

const bad = { command: process.execPath, args: [misbehavingServerPath] };
const self = { command: "npx", args: ["-y", "codemux@latest", "--config", "/elsewhere/codemux.json"] };

/** Each client's file, where it lives on Linux, and what is in it. */
const samples: Record<string, { path: (home: string) => string; text: string }> = {
  "claude-desktop": {
    path: (home) => join(home, ".config", "Claude", "claude_desktop_config.json"),
    text: JSON.stringify({ globalShortcut: "Ctrl+Space", mcpServers: { bad, old: self } }, null, 2),
  },
  cursor: { path: (home) => join(home, ".cursor", "mcp.json"), text: JSON.stringify({ mcpServers: { bad } }, null, 2) },
  "claude-code": {
    path: (home) => join(home, ".claude.json"),
    text: JSON.stringify({ numStartups: 7, projects: { "/work": { allowedTools: [] } }, mcpServers: { bad } }, null, 2),
  },
  vscode: {
    path: (home) => join(home, ".config", "Code", "User", "mcp.json"),
    text: `{
  // VS Code writes JSONC
  "inputs": [{ "type": "promptString", "id": "token", "password": true }],
  "servers": {
    "bad": ${JSON.stringify({ type: "stdio", ...bad })},
    "gh": { "type": "http", "url": "https://api.example.com/mcp", "headers": { "Authorization": "Bearer \${input:token}" } },
  },
}
`,
  },
};

describe("codemux install", () => {
  for (const [client, sample] of Object.entries(samples)) {
    it(`${client}: --dry-run shows the diff, --yes moves the servers, codemux starts from the written config, twice changes nothing`, async () => {
      const home = tempHome();
      const file = sample.path(home);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, sample.text);
      const codemuxConfig = join(home, ".codemux", "codemux.json");

      const dry = await codemux(home, ["install", client, "--dry-run"]);
      expect(dry).toMatchObject({ code: 0 });
      expect(dry.stdout).toContain(`--- /dev/null\n+++ ${codemuxConfig}\n`);
      expect(dry.stdout).toContain(`--- ${file}\n+++ ${file}\n`);
      expect(dry.stdout).toMatch(/^-\s+"bad": \{$/m);
      expect(dry.stdout).toMatch(/^\+\s+"codemux": \{$/m);
      expect(dry.stdout).toContain(`Moved into ${codemuxConfig}: bad.`);
      // The entry is this CLI by its path: codemux is not on the npm registry yet.
      expect(dry.stdout).toContain(
        `${file} would start codemux with: ${process.execPath} ${cli} --config ${codemuxConfig} (this copy of codemux by its path, which must stay where it is; --npx writes npx -y codemux instead).`,
      );
      expect(dry.stdout).not.toContain("comments");
      if (client === "claude-desktop") expect(dry.stdout).toContain("Skipped (codemux itself): old.");
      if (client === "vscode") expect(dry.stdout).toContain("Left gh where it was: it uses ${input:...}");
      expect(readFileSync(file, "utf8")).toBe(sample.text);
      expect(existsSync(codemuxConfig)).toBe(false);

      const refused = await codemux(home, ["install", client]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`Not asking without a terminal: run codemux install ${client} --dry-run`);
      expect(readFileSync(file, "utf8")).toBe(sample.text);

      const done = await codemux(home, ["install", client, "--yes"]);
      expect(done).toMatchObject({ code: 0 });
      const backups = readdirSync(dirname(file)).filter((f) => f.startsWith(`${basename(file)}.codemux-backup-`));
      expect(backups).toHaveLength(1);
      expect(readFileSync(join(dirname(file), backups[0]!), "utf8")).toBe(sample.text);
      expect(JSON.parse(readFileSync(codemuxConfig, "utf8"))).toEqual({ mcpServers: { bad: client === "vscode" ? { type: "stdio", ...bad } : bad } });
      expect(statSync(codemuxConfig).mode & 0o777).toBe(0o600);

      const written = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, { command?: string; args?: string[] }>>;
      const key = client === "vscode" ? "servers" : "mcpServers";
      expect(Object.keys(written[key]!)).toEqual(client === "vscode" ? ["codemux", "gh"] : ["codemux"]);
      expect(written[key]!.codemux).toEqual({
        ...(client === "vscode" ? { type: "stdio" } : {}),
        command: process.execPath,
        args: [cli, "--config", codemuxConfig],
      });
      expect(done.stdout).toContain(`${file} now starts codemux with: ${process.execPath} ${cli} --config ${codemuxConfig}`);
      // Only a file with comments loses something to the rewrite; the backup keeps them.
      expect(done.stdout.includes("its comments stay in the backup")).toBe(client === "vscode");
      const others = JSON.parse(sample.text.replace(/\/\/.*$/m, "").replace(/,(\s*[}\]])/g, "$1")) as Record<string, unknown>;
      for (const k of Object.keys(others).filter((k) => k !== key)) expect(written[k]).toEqual(others[k]);

      // Started as the client will start it: the flags after the CLI's path.
      const listed = await codemux(home, ["list", ...written[key]!.codemux!.args!.slice(1)]);
      expect(listed.stdout).toMatch(/^\s*bad\s+ready\s+\d+ tools/m);
      expect(listed.code).toBe(0);

      const again = await codemux(home, ["install", client, "--yes"]);
      expect(again.stdout).toBe(`codemux is already the one entry of ${file}; nothing to change.\n`);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(written);
      expect(Object.keys(JSON.parse(readFileSync(codemuxConfig, "utf8")).mcpServers)).toEqual(["bad"]);
      expect(readdirSync(dirname(file)).filter((f) => f.includes(".codemux-backup-"))).toHaveLength(1);
    });
  }

  it("names the file and line of a malformed client config, and writes nothing", async () => {
    const home = tempHome();
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{\n  "mcpServers": {\n    "a": { "command": "x" }\n    "b": {}\n  }\n}\n');
    const result = await codemux(home, ["install", "cursor", "--yes"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`Invalid config ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: JSON syntax error at line 4, column 5`));
    expect(existsSync(join(home, ".codemux"))).toBe(false);
  });

  it("--npx writes the npm registry's form and says so; --local (the default) and --npx together are refused", async () => {
    const home = tempHome();
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ mcpServers: { bad } }));
    const codemuxConfig = join(home, ".codemux", "codemux.json");
    const npx = await codemux(home, ["install", "cursor", "--npx", "--yes"]);
    expect(npx).toMatchObject({ code: 0 });
    expect(npx.stdout).toContain(
      `${file} now starts codemux with: npx -y codemux --config ${codemuxConfig} (npx -y codemux, from the npm registry, which serves codemux once it is released).`,
    );
    expect(JSON.parse(readFileSync(file, "utf8")).mcpServers.codemux).toEqual({ command: "npx", args: ["-y", "codemux", "--config", codemuxConfig] });
    // The path form replaces it: both are codemux, so the servers stay where they are.
    const local = await codemux(home, ["install", "cursor", "--local", "--yes"]);
    expect(local.stdout).toContain(`${file} now starts codemux with: ${process.execPath} ${cli} --config ${codemuxConfig} (this copy of codemux by its path`);
    expect(JSON.parse(readFileSync(file, "utf8")).mcpServers).toEqual({ codemux: { command: process.execPath, args: [cli, "--config", codemuxConfig] } });
    const both = await codemux(home, ["install", "cursor", "--local", "--npx", "--dry-run"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--local' cannot be used with option '--npx'");
  });

  it("refuses an unknown client", async () => {
    const result = await codemux(tempHome(), ["install", "emacs", "--yes"]);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toContain('Unknown client "emacs"; use one of claude-desktop, cursor, claude-code, vscode.');
  });
});

describe("codemux import", () => {
  it("adds the servers of a file to codemux's config without touching the file; a clash is kept under another name", async () => {
    const home = tempHome();
    const source = join(home, "team.json");
    const text = JSON.stringify({ mcpServers: { bad, other: { command: "echo", args: ["x"] }, me: { command: "codemux", args: [] } } });
    writeFileSync(source, text);
    mkdirSync(join(home, ".codemux"));
    writeFileSync(join(home, ".codemux", "codemux.json"), JSON.stringify({ mcpServers: { other: { command: "true" } }, plugins: [] }));
    const dry = await codemux(home, ["import", source, "--dry-run"]);
    expect(dry.stdout).toMatch(/^\+\s+"bad": \{$/m);
    expect(JSON.parse(readFileSync(join(home, ".codemux", "codemux.json"), "utf8")).mcpServers).toEqual({ other: { command: "true" } });

    const result = await codemux(home, ["import", source]);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain("bad, other (as other-imported)");
    expect(result.stdout).toContain("Skipped (codemux itself): me.");
    const config = JSON.parse(readFileSync(join(home, ".codemux", "codemux.json"), "utf8"));
    expect(config).toEqual({ mcpServers: { other: { command: "true" }, bad, "other-imported": { command: "echo", args: ["x"] } }, plugins: [] });
    expect(readFileSync(source, "utf8")).toBe(text);
  });
});

describe("secrets, empty configs and file modes", () => {
  const secrets = ["ARGSECRET1", "ghp_0123456789abcdefghijABCDEFGHIJ", "ENVSECRET2", "HEADERSECRET3"];
  const withSecrets = {
    mcpServers: {
      gh: {
        command: process.execPath,
        args: [misbehavingServerPath, "--token=ARGSECRET1"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: secrets[1], OTHER: "ENVSECRET2" },
      },
      api: { url: "https://api.example.com/mcp", headers: { Authorization: "Bearer HEADERSECRET3" } },
    },
  };

  it("install and import --dry-run mask env and header values and secrets in arguments; import says it copies", async () => {
    const home = tempHome();
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(withSecrets, null, 2));
    const install = await codemux(home, ["install", "cursor", "--dry-run"]);
    const imported = await codemux(home, ["import", file, "--dry-run"]);
    for (const run of [install, imported]) {
      expect(run.code).toBe(0);
      for (const secret of secrets) expect(run.stdout).not.toContain(secret);
      expect(run.stdout).toMatch(/^\+\s+"GITHUB_PERSONAL_ACCESS_TOKEN": "\*\*\*",$/m);
      expect(run.stdout).toMatch(/^\+\s+"Authorization": "\*\*\*"$/m);
    }
    expect(install.stdout).toMatch(/^-\s+"OTHER": "\*\*\*"$/m);
    expect(imported.stdout).toContain(`Copied into ${join(home, ".codemux", "codemux.json")}: gh, api.`);
    expect(imported.stdout).not.toContain("Moved");
    const copied = await codemux(home, ["import", file]);
    expect(copied.stdout).toContain(`Copied into ${join(home, ".codemux", "codemux.json")}: gh, api.`);
  });

  it("install from a client config without servers says so and writes nothing; with servers already in codemux's config it goes on", async () => {
    const home = tempHome();
    const file = join(home, ".cursor", "mcp.json");
    const codemuxConfig = join(home, ".codemux", "codemux.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '{ "mcpServers": {} }');
    const refused = await codemux(home, ["install", "cursor", "--yes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `codemux: ${file} lists no servers codemux can serve, and codemux's config ${codemuxConfig} has none either, so nothing was written.`,
    );
    expect(existsSync(codemuxConfig)).toBe(false);
    expect(readFileSync(file, "utf8")).toBe('{ "mcpServers": {} }');

    mkdirSync(dirname(codemuxConfig));
    writeFileSync(codemuxConfig, JSON.stringify({ mcpServers: { bad } }));
    const done = await codemux(home, ["install", "cursor", "--yes"]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`${file} lists no servers; codemux serves the 1 already in ${codemuxConfig}.`);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).mcpServers)).toEqual(["codemux"]);
  });

  it("tightens a codemux config that others can read to 0600 when servers move into it, and says so; a file without comments gets no note about them", async () => {
    const home = tempHome();
    const codemuxConfig = join(home, ".codemux", "codemux.json");
    mkdirSync(dirname(codemuxConfig));
    writeFileSync(codemuxConfig, JSON.stringify({ mcpServers: { other: { command: "true" } } }), { mode: 0o644 });
    const source = join(home, "team.json");
    writeFileSync(source, JSON.stringify(withSecrets));
    const imported = await codemux(home, ["import", source]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`${codemuxConfig} was readable by other users (mode 0644); it is now 0600, as the servers in it may carry API keys.`);
    expect(statSync(codemuxConfig).mode & 0o777).toBe(0o600);

    chmodSync(codemuxConfig, 0o640);
    const file = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(file), { recursive: true });
    // Four spaces and no comments: rewriting changes the layout, and nothing is lost.
    writeFileSync(file, JSON.stringify({ mcpServers: { more: { command: "true", env: { KEY: "ENVSECRET4" } } } }, null, 4));
    const installed = await codemux(home, ["install", "cursor", "--yes"]);
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`${codemuxConfig} was readable by other users (mode 0640); it is now 0600`);
    expect(installed.stdout).not.toContain("comments");
    expect(statSync(codemuxConfig).mode & 0o777).toBe(0o600);
  });
});

describe("client config locations", () => {
  it("follow each platform's convention", () => {
    const env = { HOME: "/h", APPDATA: "C:\\Users\\u\\AppData\\Roaming", XDG_CONFIG_HOME: "/x" };
    expect(clientConfigPath("claude-desktop", env, "darwin")).toBe(join("/h", "Library", "Application Support", "Claude", "claude_desktop_config.json"));
    expect(clientConfigPath("claude-desktop", env, "win32")).toBe(join("C:\\Users\\u\\AppData\\Roaming", "Claude", "claude_desktop_config.json"));
    expect(clientConfigPath("claude-desktop", env, "linux")).toBe(join("/x", "Claude", "claude_desktop_config.json"));
    expect(clientConfigPath("vscode", { HOME: "/h" }, "linux")).toBe(join("/h", ".config", "Code", "User", "mcp.json"));
    expect(clientConfigPath("vscode", env, "darwin")).toBe(join("/h", "Library", "Application Support", "Code", "User", "mcp.json"));
    expect(clientConfigPath("cursor", env, "win32")).toBe(join("/h", ".cursor", "mcp.json"));
    expect(clientConfigPath("claude-code", env, "linux")).toBe(join("/h", ".claude.json"));
  });

  it("recognises codemux entries, also Windows' cmd /c form, and writes one it recognises", () => {
    // The path form as the built CLI writes it (from the sources here, the path would be src/launch.ts).
    expect(isCodemuxEntry({ command: process.execPath, args: [cli, "--config", "/c.json"] })).toBe(true);
    expect(isCodemuxEntry(codemuxEntry("cursor", "/c.json", { npx: true }))).toBe(true);
    expect(isCodemuxEntry({ command: "cmd", args: ["/c", "npx", "-y", "codemux", "--config", "C:\\c.json"] })).toBe(true);
    expect(isCodemuxEntry({ command: "C:\\Windows\\System32\\cmd.exe", args: ["/C", "codemux"] })).toBe(true);
    expect(isCodemuxEntry({ command: "cmd", args: ["/c", "npx", "-y", "@modelcontextprotocol/server-memory"] })).toBe(false);
  });
});
