// The MCP Inspector recipes of docs/debugging.md, run as written against the clone's built CLI:
// the Inspector from npm (npx -y), codemux over stdio with its config in -e CODEMUX_CONFIG, and over
// HTTP with ?apikey=. Needs a build first (`pnpm build`); run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runCommand } from "../lib/fresh-project.mjs";
import { root } from "../lib/workspace.mjs";

const work = mkdtempSync(join(tmpdir(), "codemux-debugging-"));
const cli = join(root, "apps/cli/dist/index.js");
const token = "inspector-test-token-0123456789";
const env = { ...process.env, CODEMUX_HOME: join(work, "home"), npm_config_update_notifier: "false" };
let server;
let url = "";

/** The docs' command lines that start with `prefix`, in the order written. */
function recipes(prefix) {
  const text = readFileSync(join(root, "docs/debugging.md"), "utf8");
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) => block[1].split("\n").filter((line) => line.startsWith(prefix)));
}

/** Runs a line of the docs in a shell, in the folder with codemux.json and tokens.txt, with the clone's CLI and this test's server. */
function shell(line) {
  const command = line.replaceAll("apps/cli/dist/index.js", cli).replaceAll("http://127.0.0.1:3920", url).replaceAll("TOKEN", token);
  return runCommand("sh", ["-c", command], { cwd: work, env, timeoutMs: 600_000 });
}

before(async () => {
  const misbehaving = join(root, "packages/test-servers/dist/misbehaving.js");
  writeFileSync(join(work, "codemux.json"), JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehaving] } } }));
  writeFileSync(join(work, "tokens.txt"), `inspector:${token}\n`);
  const [serve] = recipes("node apps/cli/dist/index.js serve --http");
  assert.ok(serve, "docs/debugging.md shows no `node apps/cli/dist/index.js serve --http` line.");
  const args = serve
    .replace(/\s*&$/, "")
    .split(/\s+/)
    .slice(1)
    .map((arg) => (arg === "3920" ? ":0" : arg.replace("apps/cli/dist/index.js", cli)));
  server = spawn(process.execPath, args, { cwd: work, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  url = await new Promise((resolve, reject) => {
    server.stderr.on("data", (chunk) => {
      stderr += chunk;
      const found = /serving (http:\/\/\S+)\/mcp/.exec(stderr);
      if (found) resolve(found[1]);
    });
    server.once("exit", (code) => reject(new Error(`codemux serve --http exited (${code}): ${stderr}`)));
  });
});

after(() => {
  server?.kill("SIGTERM");
  rmSync(work, { recursive: true, force: true });
});

describe("docs/debugging.md's Inspector recipes", () => {
  test("over stdio: the tool list, a search, and the config given with -e CODEMUX_CONFIG", async () => {
    const lines = recipes("npx -y @modelcontextprotocol/inspector --cli node");
    const withConfig = recipes("npx -y @modelcontextprotocol/inspector --cli -e CODEMUX_CONFIG=");
    assert.ok(lines.length >= 2 && withConfig.length >= 1, "docs/debugging.md lacks the stdio recipes.");
    for (const line of [...lines, ...withConfig]) {
      const run = await shell(line);
      assert.equal(run.code, 0, `${line}\n${run.stderr}`);
      assert.match(run.stdout, /search_tools|fs__|"content"/, line);
    }
    // The config came through the environment: its server's tool is found.
    assert.match((await shell(withConfig[0])).stdout, /m__echo/);
  });

  test("over HTTP with ?apikey=", async () => {
    const [line] = recipes('npx -y @modelcontextprotocol/inspector --cli "http://');
    assert.ok(line, "docs/debugging.md lacks the HTTP recipe.");
    const run = await shell(line);
    assert.equal(run.code, 0, `${line}\n${run.stderr}`);
    assert.match(run.stdout, /"name": "execute_code"/);
  });
});
