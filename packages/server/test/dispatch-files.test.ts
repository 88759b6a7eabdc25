import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, DISPATCH_TOOL_NAME, createSessionServer, dispatchFilesOf, type DispatchFiles } from "../src/index";
import { MAX_ARGUMENT_FILE_BYTES } from "../src/surfaces/dispatch-files";
import { forgetResultFiles, writeResultFile } from "../src/surfaces/dispatch-files";
import { config, misbehaving, textOf } from "./helpers";

let dir: string;
let core: Codemux;
const clients: Client[] = [];
const swappers: ChildProcess[] = [];

/**
 * A child process that swaps a symbolic link to `outside` in and out at `path` in a tight loop: "file" puts the link
 * and a regular file holding `text` there in turn, "folder" moves the folder at `path` aside and puts the link in its place.
 */
async function swapper({ mode, path, outside, text = "" }: { mode: "file" | "folder"; path: string; outside: string; text?: string }): Promise<ChildProcess> {
  const script = `
    const fs = require("node:fs");
    const [mode, path, outside, text] = process.argv.slice(1);
    let n = 0;
    // codemux makes the principal's result folder when it finds none: that one is moved out of the way, inside its parent.
    const retry = (step) => {
      for (;;) {
        try { return step(); } catch (error) {
          if (error.code !== "EEXIST" && error.code !== "ENOTEMPTY") throw error;
          try { fs.renameSync(path, path + ".made" + n); } catch {}
        }
      }
    };
    for (n = 1; ; n++) {
      if (mode === "file") {
        fs.symlinkSync(outside, path + ".link"); fs.renameSync(path + ".link", path);
        fs.writeFileSync(path + ".file", text); fs.renameSync(path + ".file", path);
      } else {
        fs.renameSync(path, path + ".aside"); retry(() => fs.symlinkSync(outside, path));
        fs.unlinkSync(path); retry(() => fs.renameSync(path + ".aside", path));
      }
      if (n === 100) process.stdout.write("swapping\\n");
    }`;
  const child = spawn(process.execPath, ["-e", script, mode, path, outside, text], { stdio: ["ignore", "pipe", "inherit"] });
  swappers.push(child);
  const started = await Promise.race([once(child.stdout as NodeJS.ReadableStream, "data"), once(child, "exit").then(() => undefined)]);
  if (!started) throw new Error(`the swapping helper ended at once (${mode} ${path})`);
  return child;
}

/** A client of the dispatch surface as `principal`. */
async function as(principal: string): Promise<(args: Record<string, unknown>) => Promise<CallToolResult>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { session: core.session(principal) }).connect(serverSide);
  const client = new Client({ name: principal, version: "1.0.0" });
  await client.connect(clientSide);
  clients.push(client);
  return async (args) => (await client.callTool({ name: DISPATCH_TOOL_NAME, arguments: { action: "call", ...args } })) as CallToolResult;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-dispatch-files-"));
  for (const folder of ["in", "in/token%3Aalice", "in/token%3Abob", "in/token%3Aalice/sub", "out", "secret", "outside"])
    await mkdir(join(dir, folder), { recursive: true });
  await writeFile(join(dir, "in", "args.json"), JSON.stringify({ text: "from the owner's file" }));
  await writeFile(join(dir, "in", "token%3Aalice", "args.json"), JSON.stringify({ text: "alice's arguments" }));
  await writeFile(join(dir, "in", "token%3Abob", "args.json"), JSON.stringify({ text: "bob's arguments" }));
  await writeFile(join(dir, "secret", "key.json"), JSON.stringify({ text: "the secret" }));
  await writeFile(join(dir, "secret", "args.json"), JSON.stringify({ text: "the secret" }));
  await writeFile(join(dir, "in", "token%3Aalice", "sub", "args.json"), JSON.stringify({ text: "alice's arguments" }));
  await writeFile(join(dir, "in", "list.json"), "[1, 2]");
  await writeFile(join(dir, "in", "broken.json"), "{ not json");
  await writeFile(join(dir, "in", "big.json"), Buffer.alloc(MAX_ARGUMENT_FILE_BYTES + 1, 32));
  await symlink(join(dir, "secret", "key.json"), join(dir, "in", "link.json"));
  await symlink(join(dir, "secret"), join(dir, "in", "token%3Aalice", "escape"));
  const files = dispatchFilesOf({ dispatch: { allowArgumentFiles: ["in"], resultFileDir: "out" } }, "codemux.json", dir);
  core = new Codemux({ config: config({ m: misbehaving() }), mode: "dispatch", ...(files ? { dispatchFiles: files } : {}) });
  core.start();
});
afterAll(async () => {
  for (const swapper of swappers) swapper.kill("SIGKILL");
  for (const client of clients) await client.close();
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

describe("dispatch call: argumentsFile and resultToFile", () => {
  it("reads arguments from a file under an allowed folder, and says where they came from in _meta", async () => {
    const call = await as("local");
    const file = join(dir, "in", "args.json");
    const result = await call({ tool: "m__echo", argumentsFile: file });
    expect(textOf(result)).toBe("from the owner's file");
    expect(result._meta?.["codemux/arguments"]).toEqual({ _fromFile: file });
  });

  it("refuses every path outside the folders with one sentence, whether it exists or not: .., absolute, relative, a symlink out", async () => {
    const call = await as("local");
    for (const path of [
      join(dir, "secret", "key.json"),
      join(dir, "in", "..", "secret", "key.json"),
      "/etc/passwd",
      "in/args.json",
      join(dir, "in", "link.json"),
      join(dir, "nothing.json"),
    ]) {
      const refused = await call({ tool: "m__echo", argumentsFile: path });
      expect(refused.isError, path).toBe(true);
      expect(textOf(refused)).toContain(
        `argumentsFile may only name a result codemux kept (res_…) or a file under ${join(dir, "in")}, ${join(dir, "out")}; got`,
      );
    }
  });

  it("refuses a file over 10 MiB, one that is not JSON, and one that is not an object, each saying so", async () => {
    const call = await as("local");
    expect(textOf(await call({ tool: "m__echo", argumentsFile: join(dir, "in", "big.json") }))).toContain(
      `an argument file may be at most ${MAX_ARGUMENT_FILE_BYTES}`,
    );
    expect(textOf(await call({ tool: "m__echo", argumentsFile: join(dir, "in", "broken.json") }))).toContain("is not JSON");
    expect(textOf(await call({ tool: "m__echo", argumentsFile: join(dir, "in", "list.json") }))).toContain("Arguments must be a JSON object");
    expect(textOf(await call({ tool: "m__echo", arguments: { text: "x" }, argumentsFile: join(dir, "in", "args.json") }))).toContain(
      'Give one of "arguments", "argumentsFrom" and "argumentsFile", not "arguments" and "argumentsFile".',
    );
  });

  it("gives each principal other than the owner only its own subfolder, and never another's or a symlink out of it", async () => {
    const alice = await as("token:alice");
    expect(textOf(await alice({ tool: "m__echo", argumentsFile: join(dir, "in", "token%3Aalice", "args.json") }))).toBe("alice's arguments");
    for (const path of [join(dir, "in", "token%3Abob", "args.json"), join(dir, "in", "args.json"), join(dir, "in", "token%3Aalice", "escape", "key.json")]) {
      const refused = await alice({ tool: "m__echo", argumentsFile: path });
      expect(refused.isError, path).toBe(true);
      expect(textOf(refused)).toContain("argumentsFile may only name a result codemux kept (res_…) or a file under");
    }
  });

  it("writes a result to the principal's part of the result folder (0600), pages it by handle, and chains it as the next call's argumentsFile", async () => {
    const alice = await as("token:alice");
    const written = JSON.parse(textOf(await alice({ tool: "m__structured", arguments: { n: 21 }, resultToFile: true }))) as {
      resultFile: string;
      handle: string;
    };
    expect(written.resultFile.startsWith(join(dir, "out", "token%3Aalice") + "/")).toBe(true);
    expect(JSON.parse(await readFile(written.resultFile, "utf8"))).toEqual({ n: 21, doubled: 42 });
    expect((await stat(written.resultFile)).mode & 0o777).toBe(0o600);
    expect(written.handle).toMatch(/^res_[0-9a-f]{12}$/);
    // The file codemux wrote for alice is hers to pass on; not bob's.
    const chained = await alice({ tool: "m__structured", argumentsFile: written.resultFile });
    expect(chained.isError).toBeFalsy();
    const bob = await as("token:bob");
    expect((await bob({ tool: "m__structured", argumentsFile: written.resultFile })).isError).toBe(true);
  });

  it("without folders in the config: argumentsFile takes a kept handle only, and resultToFile answers with the handle", async () => {
    const bare = new Codemux({ config: config({ m: misbehaving() }), mode: "dispatch" });
    bare.start();
    try {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createSessionServer(bare.sessions).connect(serverSide);
      const client = new Client({ name: "bare", version: "1.0.0" });
      await client.connect(clientSide);
      const call = async (args: Record<string, unknown>) =>
        (await client.callTool({ name: DISPATCH_TOOL_NAME, arguments: { action: "call", ...args } })) as CallToolResult;
      const kept = JSON.parse(textOf(await call({ tool: "m__structured", arguments: { n: 2 }, resultToFile: true }))) as { resultFile: string; handle: string };
      expect(kept.resultFile).toBe(kept.handle);
      expect((await call({ tool: "m__structured", argumentsFile: kept.handle })).isError).toBeFalsy();
      expect(textOf(await call({ tool: "m__echo", argumentsFile: "/etc/passwd" }))).toContain(
        'argumentsFile may only name a result codemux kept (res_…) here; got "/etc/passwd". To read files, list their folder in the config\'s dispatch.allowArgumentFiles.',
      );
      await client.close();
    } finally {
      await bare.close();
    }
  });

  it("forget deletes the files written for one principal, the owner's at the folder's top only, and never follows a planted link", async () => {
    const files = dispatchFilesOf({ dispatch: { resultFileDir: "forget-out" } }, "codemux.json", dir) as DispatchFiles;
    const folder = files.resultFileDir as string;
    for (const principal of ["token:carol", "token:dave", "local"]) await writeResultFile(files, { principal, tool: "m__echo", text: `${principal}'s result` });
    await writeFile(join(dir, "secret", "keep.txt"), "outside");
    await symlink(join(dir, "secret"), join(folder, "token%3Aeve"));
    expect(await forgetResultFiles(files, "token:carol")).toBe(1);
    expect(await readdir(folder)).not.toContain("token%3Acarol");
    expect(await readdir(join(folder, "token%3Adave"))).toHaveLength(1);
    // The owner's files are at the top; the others' folders stay.
    expect(await forgetResultFiles(files, "local")).toBe(1);
    expect((await readdir(folder)).sort()).toEqual(["token%3Adave", "token%3Aeve"]);
    // A link where eve's folder would be goes, and nothing it points at.
    expect(await forgetResultFiles(files, "token:eve")).toBe(0);
    expect(await readdir(folder)).toEqual(["token%3Adave"]);
    expect(await readFile(join(dir, "secret", "keep.txt"), "utf8")).toBe("outside");
    expect(await forgetResultFiles(files, "token:nobody")).toBe(0);
  });

  it("never reads a file outside while a link is swapped in at the file or at a folder on its path, however often it is called", async () => {
    const alice = await as("token:alice");
    const inside = JSON.stringify({ text: "alice's arguments" });
    const seen: Record<string, string[]> = {};
    for (const [mode, path, outside] of [
      ["file", join(dir, "in", "token%3Aalice", "race.json"), join(dir, "secret", "key.json")],
      ["folder", join(dir, "in", "token%3Aalice", "sub"), join(dir, "secret")],
    ] as const) {
      const child = await swapper({ mode, path, outside, text: inside });
      const file = mode === "file" ? path : join(path, "args.json");
      const answers = new Set<string>();
      for (let i = 0; i < 1000; i++) {
        const result = await alice({ tool: "m__echo", argumentsFile: file });
        answers.add(result.isError ? "refused" : textOf(result));
      }
      child.kill("SIGKILL");
      await once(child, "exit");
      seen[mode] = [...answers].sort();
    }
    // Each call read alice's file or was refused; none ever read the secret.
    expect(seen).toEqual({ file: expect.not.arrayContaining(["the secret"]), folder: expect.not.arrayContaining(["the secret"]) });
    for (const answers of Object.values(seen)) for (const answer of answers) expect(["alice's arguments", "refused"]).toContain(answer);
  });

  it("never writes a result outside the result folder while a link to outside is swapped in at the principal's folder", async () => {
    const carol = await as("token:carol");
    await mkdir(join(dir, "out", "token%3Acarol"), { recursive: true });
    const child = await swapper({ mode: "folder", path: join(dir, "out", "token%3Acarol"), outside: join(dir, "outside") });
    const outcomes = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const result = await carol({ tool: "m__structured", arguments: { n: i }, resultToFile: true });
      outcomes.add(result.isError ? textOf(result).replace(/ (is not a folder|was moved).*/, " $1") : "written");
    }
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await readdir(join(dir, "outside"))).toEqual([]);
    const refusal = `codemux did not write the result: ${join(dir, "out", "token%3Acarol")}`;
    for (const outcome of outcomes) expect(["written", `${refusal} is not a folder`, `${refusal} was moved`]).toContain(outcome);
  });

  it("refuses to write through a link planted at the principal's result folder, saying what to do", async () => {
    const dave = await as("token:dave");
    await symlink(join(dir, "outside"), join(dir, "out", "token%3Adave"));
    const refused = await dave({ tool: "m__structured", arguments: { n: 1 }, resultToFile: true });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain(
      `codemux did not write the result: ${join(dir, "out", "token%3Adave")} is not a folder codemux made (a symbolic link or a file is there). Remove it, then call again.`,
    );
    expect(await readdir(join(dir, "outside"))).toEqual([]);
  });

  it("checks the config's dispatch block", () => {
    expect(() => dispatchFilesOf({ dispatch: { allowArgumentFile: [] } }, "c.json", "/")).toThrow(
      'Invalid config c.json: dispatch.allowArgumentFile: unknown setting (did you mean "allowArgumentFiles"?); dispatch takes allowArgumentFiles, resultFileDir.',
    );
    expect(() => dispatchFilesOf({ dispatch: { allowArgumentFiles: "/data" } }, "c.json", "/")).toThrow("dispatch.allowArgumentFiles: expected a list");
  });
});
