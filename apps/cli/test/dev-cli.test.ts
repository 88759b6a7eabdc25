import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const repo = resolve(import.meta.dirname, "../../..");

let clone: string;
let home: string;

/** A fresh clone: the checkout's files as git sees them (no dist, no node_modules), then `pnpm install` and nothing more. */
beforeAll(async () => {
  clone = await mkdtemp(join(tmpdir(), "codemux-clone-"));
  home = await mkdtemp(join(tmpdir(), "codemux-home-"));
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(repo, file))) continue;
    await mkdir(dirname(join(clone, file)), { recursive: true });
    await copyFile(join(repo, file), join(clone, file));
  }
  // Offline, from the store this checkout was installed from: the test needs no network.
  await run("pnpm", ["install", "--offline", "--frozen-lockfile"], { cwd: clone });
}, 180_000);
afterAll(async () => {
  await Promise.all([clone, home].map((d) => rm(d, { recursive: true, force: true })));
});

const devCli = (args: string[], input?: string) => {
  const child = run("pnpm", ["--silent", "dev:cli", ...args], {
    cwd: clone,
    env: { PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") },
  });
  if (input !== undefined) child.child.stdin?.end(input);
  return child;
};

describe("pnpm dev:cli", () => {
  it("runs the CLI from its sources on a fresh clone with nothing built: --version, list and exec (the sandbox worker too)", async () => {
    for (const dir of ["apps/cli", "packages/core", "packages/server", "packages/sandbox", "packages/pool"])
      expect(existsSync(join(clone, dir, "dist"))).toBe(false);
    expect((await devCli(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

    const everything = require.resolve("@modelcontextprotocol/server-everything/package.json");
    const config = join(clone, "dev.json");
    await writeFile(config, JSON.stringify({ mcpServers: { ev: { command: process.execPath, args: [join(dirname(everything), "dist/index.js"), "stdio"] } } }));
    expect((await devCli(["--config", config, "list"])).stdout).toMatch(/ev\s+ready\s+\d+ tools/);

    const exec = await devCli(
      ["--config", config, "exec", "-"],
      'import { echo } from "mcp/servers/ev/echo";\nexport default await echo({ message: "from src" });\n',
    );
    expect(JSON.parse(exec.stdout)).toMatchObject({ result: "Echo: from src", toolCalls: 1 });
    expect(existsSync(join(clone, "packages/sandbox/dist"))).toBe(false);
  }, 120_000);
});
