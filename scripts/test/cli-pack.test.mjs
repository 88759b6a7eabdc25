// The packed CLI on its own: `pnpm pack` of apps/cli, installed with npm into an empty project,
// run with npx and driven over stdio by the MCP SDK client, as an MCP client config would.
// Needs a build first (`pnpm build`); run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freshProject, runCommand } from "../lib/fresh-project.mjs";
import { packAll, root, workspacePackages } from "../lib/workspace.mjs";

const work = mkdtempSync(join(tmpdir(), "codemux-cli-pack-"));
const folder = join(work, "served"); // the folder the built-in filesystem server serves
const project = join(work, "project");
const env = { ...process.env, CODEMUX_HOME: join(work, "home"), npm_config_prefer_offline: "true", npm_config_update_notifier: "false" };
let tarball = "";

/** The installed CLI, as npm linked it. */
const codemuxBin = () => join(project, "node_modules/.bin/codemux");

/** Connects the SDK client (installed in the project with codemux) to a command line; returns what it saw. */
async function drive(entry, steps, driveEnv = env) {
  const input = JSON.stringify({ command: entry.command, args: entry.args, root: folder, steps });
  const result = await runCommand(process.execPath, ["drive-codemux.mjs", input], { cwd: project, env: driveEnv });
  assert.equal(result.code, 0, `driving ${entry.command} ${entry.args.join(" ")} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

/** Starts the installed codemux on a pseudo-terminal (so it prints its banner), reads the banner, then presses Ctrl+C. */
function banner(args) {
  const line = ["node_modules/.bin/codemux", ...args].map((word) => `'${word}'`).join(" ");
  const child = spawn("script", ["-qfec", line, "/dev/null"], { cwd: project, env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let interrupted = false;
  // The terminal may close before a late write reaches it; that is the end we wait for anyway.
  child.stdin.on("error", () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`No banner from codemux on a terminal; it printed:\n${output}`));
    }, 60_000);
    child.stdout.on("data", (chunk) => {
      output += chunk;
      if (!interrupted && output.includes("press Ctrl+C to stop")) {
        interrupted = true;
        child.stdin.write("\x03");
      }
    });
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(output.replaceAll("\r", ""));
    });
  });
}

before(async () => {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "hello.txt"), "hello from the pack test\n");
  const cli = workspacePackages().find((pkg) => pkg.name === "codemux");
  assert.ok(cli, "apps/cli (package codemux) is missing or private.");
  [tarball] = packAll([cli], work);
  await freshProject(project, [tarball]);
  copyFileSync(join(import.meta.dirname, "../fixtures/drive-codemux.mjs"), join(project, "drive-codemux.mjs"));
});

after(() => rmSync(work, { recursive: true, force: true }));

describe("the packed codemux CLI", () => {
  test("holds only what it needs: no workspace ranges, no @codemux dependency, the sandbox worker beside the bundle", async () => {
    const listing = await runCommand("tar", ["tzf", tarball]);
    assert.match(listing.stdout, /package\/dist\/index\.js/);
    assert.match(listing.stdout, /package\/dist\/worker\.js/);
    const manifest = JSON.parse(readFileSync(join(project, "node_modules/codemux/package.json"), "utf8"));
    assert.doesNotMatch(JSON.stringify(manifest), /workspace:/);
    assert.deepEqual(
      Object.keys(manifest.dependencies).filter((name) => name.startsWith("@codemux/")),
      [],
    );
    for (const name of [
      "@jitl/quickjs-wasmfile-release-sync",
      "@modelcontextprotocol/server-filesystem",
      "@modelcontextprotocol/server-memory",
      "esbuild",
      "typescript",
    ]) {
      assert.ok(manifest.dependencies[name], `${name} must be a dependency of codemux: it is found from the installed location.`);
    }
  });

  test("npx --package=<tarball> codemux --help works from an empty folder", async () => {
    const empty = join(work, "empty");
    mkdirSync(empty, { recursive: true });
    const result = await runCommand("npx", ["-y", `--package=${tarball}`, "codemux", "--help"], { cwd: empty, env, timeoutMs: 300_000 });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Usage: codemux/);
    assert.match(result.stdout, /--root <dir>/);
  });

  test("npx -y codemux --root DIR serves the built-in default: list, search, call a filesystem tool, execute_code", async () => {
    const seen = await drive({ command: "npx", args: ["-y", "codemux", "--root", folder] }, ["search", "call", "execute"]);
    for (const tool of ["search_tools", "execute_code", "call_tool", "read_module"]) assert.ok(seen.tools.includes(tool), `${tool} not listed: ${seen.tools}`);
    assert.match(seen.search, /fs__read_text_file/);
    assert.equal(seen.call.isError, false, seen.call.text);
    assert.match(seen.call.text, /hello from the pack test/);
    assert.equal(seen.execute.isError, false, seen.execute.text);
    assert.match(seen.execute.text, /42/);
    assert.match(seen.execute.text, /hello\.txt/);
  });

  test("the terminal banner prints snippets for Claude Desktop/Cursor, Claude Code and VS Code that start this installed copy by its path", async () => {
    const text = await banner(["--root", folder]);
    const lines = text.split("\n").map((line) => line.trim());
    const desktop = JSON.parse(lines.find((line) => line.startsWith('{"mcpServers"')) ?? "null");
    const vscode = JSON.parse(lines.find((line) => line.startsWith('{"servers"')) ?? "null");
    const claude = lines.find((line) => line.startsWith("claude mcp add codemux -- "));
    assert.ok(desktop && vscode && claude, `snippets missing from the banner:\n${text}`);
    const installed = realpathSync(join(project, "node_modules/codemux/dist/index.js"));
    assert.deepEqual(desktop.mcpServers.codemux, { command: process.execPath, args: [installed, "--root", folder] });
    assert.equal(vscode.servers.codemux.type, "stdio");
    const [command, ...args] = claude.slice("claude mcp add codemux -- ".length).split(" ");
    for (const entry of [desktop.mcpServers.codemux, vscode.servers.codemux, { command, args }]) {
      const seen = await drive(entry, ["call"]);
      assert.ok(seen.tools.includes("search_tools"));
      assert.match(seen.call.text, /hello from the pack test/);
    }
  });

  test("the root README's client snippets start the clone's built CLI (codemux is not on npm yet) and work", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const install = readme.slice(readme.indexOf("## Install"), readme.indexOf("\n## ", readme.indexOf("## Install") + 1));
    assert.match(install, /not on the npm registry yet/);
    const start = readme.indexOf("## Add codemux to your client");
    assert.ok(start >= 0, 'README.md has no "## Add codemux to your client" section.');
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    const blocks = [...section.matchAll(/```jsonc?\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]));
    const entries = blocks.map((block) => block.mcpServers?.codemux ?? block.servers?.codemux);
    const claude = section.match(/^claude mcp add codemux -- (.+)$/m);
    assert.ok(entries.length >= 2 && claude, "the section should show mcpServers and servers JSON and a claude mcp add line.");
    const [command, ...args] = claude[1].trim().split(/\s+/);
    for (const entry of [...entries, { command, args }]) {
      assert.equal(entry.command, "node");
      assert.equal(entry.args[0], "/path/to/codemux/apps/cli/dist/index.js");
      // The README's placeholders become this clone and this test's folder.
      const real = entry.args.map((arg) => arg.replace("/path/to/codemux", root).replace("/path/to/your/project", folder));
      const seen = await drive({ command: process.execPath, args: real }, ["call"]);
      assert.match(seen.call.text, /hello from the pack test/);
    }
  });

  test("skills save and a snippet that imports the skill work from the packed CLI (it ships TypeScript)", async () => {
    const skill = join(work, "shout.ts");
    writeFileSync(
      skill,
      '/** The file in capitals. */\nimport { readTextFile } from "mcp/servers/fs/readTextFile";\n\nexport async function shout(input: { path: string }): Promise<string> {\n  const { content } = await readTextFile({ path: input.path });\n  return content.toUpperCase();\n}\n',
    );
    const saved = await runCommand(codemuxBin(), ["--root", folder, "skills", "save", "shout", skill], { cwd: project, env });
    assert.equal(saved.code, 0, `${saved.stdout}${saved.stderr}`);
    assert.match(saved.stdout, /Saved mcp\/skills\/shout: shout\(input: \{ path: string; \}\): Promise<string>/);
    const snippet = join(work, "use-skill.ts");
    writeFileSync(snippet, `import { shout } from "mcp/skills/shout";\nexport default await shout({ path: ${JSON.stringify(join(folder, "hello.txt"))} });\n`);
    const ran = await runCommand(codemuxBin(), ["--root", folder, "exec", snippet], { cwd: project, env });
    assert.equal(ran.code, 0, `${ran.stdout}${ran.stderr}`);
    assert.match(ran.stdout, /HELLO FROM THE PACK TEST/);
  });

  test("install writes the installed CLI's path from an installed copy and says so; --npx writes the registry form", async () => {
    const home = join(work, "install-home");
    const cursor = join(home, ".cursor", "mcp.json");
    mkdirSync(join(home, ".cursor"), { recursive: true });
    writeFileSync(cursor, JSON.stringify({ mcpServers: { other: { command: "node", args: ["server.js"] } } }));
    const installEnv = { ...env, HOME: home, CODEMUX_HOME: join(home, ".codemux") };
    const codemuxConfig = join(home, ".codemux", "codemux.json");
    const installed = realpathSync(join(project, "node_modules/codemux/dist/index.js"));
    const local = await runCommand(codemuxBin(), ["install", "cursor", "--dry-run"], { cwd: project, env: installEnv });
    assert.equal(local.code, 0, local.stderr);
    assert.ok(
      local.stdout.includes(
        `would start codemux with: ${process.execPath} ${installed} --config ${codemuxConfig} (this copy of codemux by its path, which must stay where it is; --npx writes npx -y codemux instead)`,
      ),
      local.stdout,
    );
    const npx = await runCommand(codemuxBin(), ["install", "cursor", "--npx", "--dry-run"], { cwd: project, env: installEnv });
    assert.ok(npx.stdout.includes(`would start codemux with: npx -y codemux --config ${codemuxConfig} (npx -y codemux, from the npm registry,`), npx.stdout);
  });
});

describe("the packed CLI installed globally (npm install -g), as the README's Install section says", () => {
  // A scratch prefix stands for npm's global one (/usr/local): bin/codemux links to lib/node_modules/codemux.
  const prefix = join(work, "global");
  const codemux = () => join(prefix, "bin", "codemux");
  const installedEntry = () => realpathSync(join(prefix, "lib/node_modules/codemux/dist/index.js"));
  let install;

  before(async () => {
    const flags = ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--prefer-offline"];
    install = await runCommand("npm", [...flags, tarball], { env, timeoutMs: 300_000 });
  });

  test("installs without a deprecation warning", () => {
    assert.equal(install.code, 0, install.stderr);
    assert.doesNotMatch(`${install.stdout}${install.stderr}`, /deprecated/i);
  });

  test("codemux list serves the built-in default: the filesystem and memory servers are ready", async () => {
    const listed = await runCommand(codemux(), ["list"], { cwd: folder, env });
    assert.equal(listed.code, 0, `${listed.stdout}${listed.stderr}`);
    assert.match(listed.stdout, /^\s*fs\s+ready\s+\d+ tools/m);
    assert.match(listed.stdout, /^\s*memory\s+ready\s+\d+ tools/m);
  });

  test("a snippet runs and calls the built-in filesystem server", async () => {
    const snippet = join(work, "global-snippet.ts");
    writeFileSync(
      snippet,
      'import { readTextFile } from "mcp/servers/fs/readTextFile";\nexport default (await readTextFile({ path: "hello.txt" })).content.trim();\n',
    );
    const ran = await runCommand(codemux(), ["exec", snippet], { cwd: folder, env });
    assert.equal(ran.code, 0, `${ran.stdout}${ran.stderr}`);
    assert.match(ran.stdout, /hello from the pack test/);
  });

  test("codemux install writes the installed CLI by its path, says so, and the command it wrote serves the moved servers", async () => {
    const home = join(work, "global-home");
    const cursor = join(home, ".cursor", "mcp.json");
    mkdirSync(dirname(cursor), { recursive: true });
    // A server the client had, started by its path under codemux's own folder (not codemux itself).
    const filesystem = join(prefix, "lib/node_modules/codemux/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    writeFileSync(cursor, JSON.stringify({ mcpServers: { fs: { command: process.execPath, args: [filesystem, folder] } } }));
    const installEnv = { ...env, HOME: home, CODEMUX_HOME: join(home, ".codemux") };
    const codemuxConfig = join(home, ".codemux", "codemux.json");
    const done = await runCommand(codemux(), ["install", "cursor", "--yes"], { cwd: home, env: installEnv });
    assert.equal(done.code, 0, `${done.stdout}${done.stderr}`);
    assert.ok(
      done.stdout.includes(`now starts codemux with: ${process.execPath} ${installedEntry()} --config ${codemuxConfig} (this copy of codemux by its path`),
      done.stdout,
    );
    const entry = JSON.parse(readFileSync(cursor, "utf8")).mcpServers.codemux;
    assert.deepEqual(entry, { command: process.execPath, args: [installedEntry(), "--config", codemuxConfig] });
    const seen = await drive(entry, ["call"], installEnv);
    assert.equal(seen.call.isError, false, seen.call.text);
    assert.match(seen.call.text, /hello from the pack test/);
  });
});
