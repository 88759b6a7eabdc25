import { misbehavingServerPath } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli } from "./serve-cli";

const TOKEN = "admin-ui-token-0123456789";
let dir: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-ui-cli-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("codemux serve --http and the admin page", () => {
  it("shows the pin plugin's quarantine and the background jobs of the process it serves", async () => {
    const config = join(dir, "codemux.json");
    await writeFile(config, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, plugins: { pin: {} } }));
    const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
    const { url, stderr } = await serveCli(["serve", "--config", config, "--http", "127.0.0.1:0", "--token", `admin:${TOKEN}`], { cwd: dir, env, started });
    expect(stderr()).toContain(`admin page ${url}/ui`);
    const login = await fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams({ token: TOKEN }), redirect: "manual" });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const page = async (name: string) => (await fetch(`${url}/ui/${name}`, { headers: { cookie } })).text();
    const approvals = await page("approvals");
    expect(approvals).toContain("No tool waits for approval.");
    expect(approvals).not.toContain("the pin plugin is off");
    expect(await page("jobs")).toContain("No jobs.");
  });
});
