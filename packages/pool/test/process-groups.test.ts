import { misbehavingServerPath } from "@codemux/test-servers";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ServerPool, type ServerSpec } from "../src/index";
import { processesWith, until } from "./processes";

const parentScript = fileURLToPath(new URL("./fixtures/pool-parent.mjs", import.meta.url));

/** `sh -c` that starts a grandchild (the misbehaving server) which never answers initialize, and does not exec it. */
function hungWrapper(name: string, marker: string): ServerSpec {
  const line = `"${process.execPath}" "${misbehavingServerPath}" --start-delay-ms 600000 --name ${marker}; echo wrapper-done`;
  return { name, transport: { type: "stdio", command: "/bin/sh", args: ["-c", line], env: {} }, callTimeoutMs: 60_000, connectTimeoutMs: 60_000, tools: {} };
}

/** Waits for the wrapper and its grandchild, and returns their process group. */
async function groupOf(marker: string, parent = process.pid): Promise<number> {
  const members = await until(() => {
    const found = processesWith(marker).filter((p) => p.pid !== parent);
    return found.length >= 2 && found;
  });
  const groups = new Set(members.map((p) => p.pgrp));
  expect(groups.size).toBe(1);
  const [group] = groups;
  expect(group).not.toBe(parent);
  return group!;
}

function groupExists(group: number): boolean {
  try {
    process.kill(-group, 0);
    return processesWith("").some((p) => p.pgrp === group);
  } catch {
    return false;
  }
}

describe.skipIf(process.platform === "win32")("no stdio server outlives codemux", () => {
  it("pool.close() ends a server still connecting: the shell wrapper and its grandchild, the whole group", async () => {
    const marker = `hung-${randomUUID()}`;
    const pool = new ServerPool([hungWrapper("hung", marker)]);
    void pool.start();
    const group = await groupOf(marker);
    expect(pool.status()[0]).toMatchObject({ state: "connecting", detail: expect.stringMatching(/^starting \(\d+ s\)$/) });
    await pool.close();
    expect(processesWith(marker)).toEqual([]);
    expect(groupExists(group)).toBe(false);
  });

  it.each([
    ["is SIGTERMed", (child: ReturnType<typeof spawn>) => child.kill("SIGTERM"), "SIGTERM"],
    ["exits with process.exit()", (child: ReturnType<typeof spawn>) => child.stdin!.write("exit\n"), null],
  ])("a codemux-like parent that %s leaves none of its servers' processes behind", async (_how, end, signal) => {
    const marker = `orphan-${randomUUID()}`;
    const parent = spawn(process.execPath, [parentScript, JSON.stringify([hungWrapper("hung", marker)])], { stdio: ["pipe", "pipe", "inherit"] });
    const exited = once(parent, "exit");
    await once(parent.stdout!, "data");
    const group = await groupOf(marker, parent.pid);
    end(parent);
    const [, exitSignal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(exitSignal).toBe(signal);
    // Signals are delivered asynchronously: wait (within the test's timeout) for the kernel to finish them.
    await until(() => processesWith(marker).length === 0 && !groupExists(group));
  });

  it("a parent SIGTERMed while a server is being spawned still ends that server's group", async () => {
    const marker = `at-spawn-${randomUUID()}`;
    const parent = spawn(process.execPath, [parentScript, JSON.stringify([hungWrapper("hung", marker)]), "sigterm-at-spawn"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    let output = "";
    parent.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const [, exitSignal] = (await once(parent, "exit")) as [number | null, NodeJS.Signals | null];
    expect(exitSignal).toBe("SIGTERM");
    const wrapper = Number(/spawned (\d+)/.exec(output)?.[1]);
    expect(wrapper).toBeGreaterThan(0);
    // Without the handler in place before the spawn the parent dies of the signal at once and the wrapper lives on.
    await until(() => processesWith(marker).length === 0 && !groupExists(wrapper));
  });

  it("gives every stdio server the nesting marker", async () => {
    const pool = new ServerPool(
      [
        {
          name: "m",
          transport: { type: "stdio", command: process.execPath, args: [misbehavingServerPath], env: {} },
          callTimeoutMs: 10_000,
          connectTimeoutMs: 10_000,
          tools: {},
        },
      ],
      { env: { ...process.env, CODEMUX_DEPTH: undefined } },
    );
    try {
      await pool.start();
      const result = await pool.callTool("m", "env", { name: "CODEMUX_DEPTH" });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({ value: "1" });
    } finally {
      await pool.close();
    }
  });
});
