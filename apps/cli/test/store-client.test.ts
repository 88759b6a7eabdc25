import { freePort } from "@codemux/test-servers";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

describe("the store client of one-shot commands", () => {
  it("says why skills, approve and store import cannot run when Redis is down, with exit code 2", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-store-client-"));
    const nowhere = `redis://127.0.0.1:${await freePort()}`;
    const env = { ...process.env, CODEMUX_HOME: join(dir, "home"), CODEMUX_STORE: nowhere };
    const skills = await runCli(["skills", "list"], { cwd: dir, env });
    expect(skills.code).toBe(2);
    expect(skills.stderr).toContain(`Redis at ${nowhere} is not reachable (ECONNREFUSED), and the skills are kept there`);
    const approve = await runCli(["approve", "--list"], { cwd: dir, env });
    expect(approve.code).toBe(2);
    expect(approve.stderr).toContain(`Redis at ${nowhere} is not reachable (ECONNREFUSED); start it (or fix --store) and run codemux approve again.`);
    const store = await runCli(["store", "import"], { cwd: dir, env });
    expect(store.code).toBe(2);
    expect(store.stderr).toContain(`Redis at ${nowhere} is not reachable (ECONNREFUSED); start it (or fix --store) and run codemux store import again.`);
  }, 60_000);
});
