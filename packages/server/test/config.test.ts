import { parseConfig } from "@codemux/pool";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findConfigFile, resolveConfig, tracingOf } from "../src/index";

let dir: string;
/** No config in codemux's home unless a test writes one: the machine's own ~/.codemux is never read. */
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
  env = { CODEMUX_HOME: join(dir, "home") };
  await writeFile(join(dir, "servers.json"), JSON.stringify({ mcpServers: { a: { command: "node", args: ["a.js"] } } }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fallback = () => parseConfig(JSON.stringify({ mcpServers: { builtin: { command: "node" } } }), { file: "built-in default", env: {} });

describe("resolveConfig", () => {
  it("adds servers given inline to a config file's, and says so in the source", async () => {
    const config = await resolveConfig({ configPath: "servers.json", cwd: dir, env, inline: ["--", "b", "--", "node", "b.js"], fallback });
    expect(config.servers.map((s) => s.name)).toEqual(["a", "b"]);
    expect(config.source).toMatch(/servers\.json \+ servers given inline$/);
  });

  it("refuses a name that is both in the file and inline, rather than drop one", async () => {
    await expect(resolveConfig({ configPath: "servers.json", cwd: dir, env, inline: ["--", "a", "--", "node", "other.js"], fallback })).rejects.toThrow(
      /"a" is both in .*servers\.json and given inline/,
    );
  });

  it("serves inline servers alone without a file, and the built-in default with neither", async () => {
    expect((await resolveConfig({ cwd: dir, env, inline: ["--", "b", "--", "node"], fallback })).servers.map((s) => s.name)).toEqual(["b"]);
    expect((await resolveConfig({ cwd: dir, env, fallback })).servers.map((s) => s.name)).toEqual(["builtin"]);
  });

  it("looks up --config, then $CODEMUX_CONFIG, then ./codemux.json, then codemux.json in codemux's home, then the built-in default", async () => {
    const home = join(dir, "lookup-home");
    const project = join(dir, "project");
    await mkdir(home, { recursive: true });
    await mkdir(project, { recursive: true });
    const lookup = { cwd: project, env: { CODEMUX_HOME: home } };
    expect(findConfigFile(lookup)).toBeUndefined();
    expect((await resolveConfig({ ...lookup, fallback })).servers.map((s) => s.name)).toEqual(["builtin"]);

    await writeFile(join(home, "codemux.json"), JSON.stringify({ mcpServers: { installed: { command: "node" } } }));
    expect(findConfigFile(lookup)).toEqual({ file: join(home, "codemux.json"), step: "codemux home" });
    expect((await resolveConfig({ ...lookup, fallback })).servers.map((s) => s.name)).toEqual(["installed"]);

    await writeFile(join(project, "codemux.json"), JSON.stringify({ mcpServers: { local: { command: "node" } } }));
    expect(findConfigFile(lookup)).toEqual({ file: join(project, "codemux.json"), step: "./codemux.json" });
    expect((await resolveConfig({ ...lookup, fallback })).servers.map((s) => s.name)).toEqual(["local"]);

    const named = { ...lookup, env: { ...lookup.env, CODEMUX_CONFIG: join(dir, "servers.json") } };
    expect(findConfigFile(named)).toEqual({ file: join(dir, "servers.json"), step: "CODEMUX_CONFIG" });
    expect(findConfigFile({ ...named, configPath: "other.json" })).toEqual({ file: join(project, "other.json"), step: "--config" });
  });
});

describe("tracingOf", () => {
  it("reads the config's tracing block, naming the nearest known key for a near miss", () => {
    expect(tracingOf({ mcpServers: {} }, "codemux.json")).toBeUndefined();
    expect(tracingOf({ tracing: { enabled: true, endpoint: "http://collector:4318", serviceName: "gw" } }, "codemux.json")).toEqual({
      enabled: true,
      endpoint: "http://collector:4318",
      serviceName: "gw",
    });
    expect(tracingOf({ tracing: {} }, "codemux.json")).toEqual({ enabled: false });
    expect(() => tracingOf({ tracing: { enable: true } }, "codemux.json")).toThrow(
      /Invalid config codemux\.json: tracing\.enable: unknown setting \(did you mean "enabled"\?\); tracing takes enabled, endpoint, serviceName/,
    );
    expect(() => tracingOf({ tracing: { enabled: "yes" } }, "codemux.json")).toThrow(/tracing\.enabled: expected true or false/);
    expect(() => tracingOf({ tracing: { endpoint: "collector:4318" } }, "codemux.json")).toThrow(/tracing\.endpoint: expected the collector's OTLP\/HTTP URL/);
    expect(() => tracingOf({ tracing: true }, "codemux.json")).toThrow(/tracing: expected an object/);
  });
});
