// The deployment as docs/deploy.md runs it, without a container runtime: the image's steps
// (deploy/image/codemux-image.sh, with the Dockerfile's ENTRYPOINT and CMD) in a folder standing for the
// image's /, each container a copy of it; the Kubernetes pod and compose's two instances started with their
// arguments and environment as written (their host names and port 3920 pointed at this machine); every probe
// run as written, without a token; the shipped nginx config in front of the two instances. Needs a build
// first, redis-server and nginx (under CI=true their absence fails the suite); run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort, haveProgram, localNginxConfig, startNginx, startRedisServer } from "@codemux/test-servers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { composeFile, imageFolders, imageStage, k8sManifest, readRepoFile } from "../lib/deploy-files.mjs";
import { runCommand } from "../lib/fresh-project.mjs";
import { packAll, root, workspacePackages } from "../lib/workspace.mjs";

const haveParts = haveProgram("redis-server", "redis-server") && haveProgram("nginx", "nginx");

const work = mkdtempSync(join(tmpdir(), "codemux-deploy-"));
const image = join(work, "image");
const script = join(root, "deploy/image/codemux-image.sh");
const stage = imageStage();
// What the operator supplies: the token (compose's $CODEMUX_TOKEN, the Kubernetes secret's `token`) and the state key.
const SECRET = "deploy-suite-token-0123456789abcdef";
const STATE_KEY = "0f".repeat(32);
const bearer = { authorization: `Bearer ${SECRET}` };
const started = [];
let redis;
let nginx;

/** Runs codemux in a container of the image, as its ENTRYPOINT does with `args` (CMD, compose's command, the pod's args). */
function startContainer(name, { args, env }) {
  const dir = join(work, name);
  mkdirSync(dir);
  // A container is the image's files, its own copy of every folder but the installed programs.
  for (const entry of readdirSync(image)) {
    if (entry === "usr") symlinkSync(join(image, "usr"), join(dir, "usr"));
    else cpSync(join(image, entry), join(dir, entry), { recursive: true });
  }
  const [program, ...entryArgs] = stage.entrypoint;
  assert.equal(program, "codemux-image", "the ENTRYPOINT is the image script (COPY deploy/image/codemux-image.sh /usr/local/bin/codemux-image)");
  const child = spawn("sh", [script, ...entryArgs, ...args], {
    env: { PATH: process.env.PATH, HOME: join(dir, "home/node"), IMAGE_ROOT: dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let stderr = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      if (/codemux: serving http:\/\/\S+\/mcp/.test(stderr)) resolve({ name, dir, child, exited, stderr: () => stderr });
    });
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}) before serving:\n${stderr}`)));
  });
}

/** Each `from` (a host:port, or :3920) in a value written in a deployment file replaced by where it is here. */
const pointed = (value, places) => Object.entries(places).reduce((text, [from, to]) => text.replaceAll(from, to), value);

/** compose's ${NAME} and ${NAME:?message} with the operator's values. */
function interpolated(value, vars) {
  return value.replace(/\$\{(\w+)(?::\?[^}]*)?\}/g, (_, name) => {
    assert.ok(name in vars, `compose.yaml asks for $${name}, which the suite does not set`);
    return vars[name];
  });
}

/** The pod's environment as Kubernetes builds it: values with $(VAR) of earlier ones, the downward API, the secret's keys. */
function podEnvironment(container, { podName, podIp, secret }) {
  const env = {};
  for (const { name, value, valueFrom } of container.env) {
    if (value !== undefined) env[name] = value.replace(/\$\((\w+)\)/g, (_, ref) => env[ref] ?? `$(${ref})`);
    else if (valueFrom?.fieldRef) env[name] = { "metadata.name": podName, "status.podIP": podIp }[valueFrom.fieldRef.fieldPath];
    else if (valueFrom?.secretKeyRef) env[name] = secret[valueFrom.secretKeyRef.key];
    assert.ok(env[name] !== undefined, `the suite cannot give ${name} a value as Kubernetes would`);
  }
  return env;
}

/** A probe's `fetch('http://127.0.0.1:3920/...')` command (compose healthcheck, Dockerfile HEALTHCHECK) run as written, on `port`; its exit code. */
async function commandProbe(argv, port) {
  const [program, ...args] = argv;
  assert.equal(program, "node");
  const run = await runCommand(
    process.execPath,
    args.map((arg) => arg.replaceAll("127.0.0.1:3920/", `127.0.0.1:${port}/`)),
    { timeoutMs: 10_000 },
  );
  return run.code;
}

/** A Kubernetes httpGet probe as the kubelet runs it: no headers of ours; success is a status from 200 to 399. */
async function httpGetProbe(probe, port) {
  const response = await fetch(`http://127.0.0.1:${port}${probe.httpGet.path}`);
  await response.body?.cancel();
  return response.status;
}

/** Waits until `check` holds, polling. */
async function until(check, what) {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting: ${what}`);
}

before(async () => {
  if (!haveParts) return;
  const cli = workspacePackages().find((pkg) => pkg.name === "codemux");
  const [tarball] = packAll([cli], work);
  const npm = { npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
  // The Dockerfile's RUN, with this user as the image's user.
  const install = await runCommand("sh", [script, "install", tarball, `${process.getuid()}:${process.getgid()}`], {
    env: { ...process.env, ...npm, IMAGE_ROOT: image },
    timeoutMs: 300_000,
  });
  assert.equal(install.code, 0, install.stderr);
  redis = await startRedisServer();
});

after(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await nginx?.stop();
  await redis?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("the image's steps (deploy/image/codemux-image.sh, as the Dockerfile runs them)", { skip: !haveParts }, () => {
  test("install puts codemux on the image's PATH and makes its folders, owned by the image's user", () => {
    assert.ok(existsSync(join(image, "usr/local/bin/codemux")));
    const folders = imageFolders();
    for (const folder of [folders.data, folders.home]) assert.equal(statSync(join(image, folder)).uid, process.getuid(), folder);
  });
});

describe("the Kubernetes pod (deploy/k8s/codemux.yaml), token-protected, asked by every probe as written", { skip: !haveParts }, () => {
  // Needs the health routes to answer a probe without a token (issue 42.2).
  test("ready: the probes pass; after SIGTERM, draining: readiness fails with 503, liveness and the image's HEALTHCHECK still pass", async () => {
    const { container } = k8sManifest();
    const { instances } = composeFile();
    const port = await freePort();
    const env = podEnvironment(container, {
      podName: "codemux-7d4b9c6f5-x8k2p",
      podIp: "127.0.0.1",
      secret: { token: `me:${SECRET}`, "state-key": STATE_KEY, store: redis.url },
    });
    const pod = await startContainer("pod", {
      args: container.args.map((arg) => pointed(arg, { ":3920": `:${port}` })),
      env: Object.fromEntries(Object.entries(env).map(([name, value]) => [name, pointed(value, { ":3920": `:${port}` })])),
    });
    const base = `http://127.0.0.1:${port}`;
    // Ready once its built-in servers are: asked with the token, which shows the state.
    await until(async () => (await fetch(`${base}/readyz`, { headers: bearer })).status === 200, "the pod to be ready");
    assert.equal((await fetch(`${base}/v1/tools`)).status, 401, "the pod serves nothing without its token");

    const readiness = () => httpGetProbe(container.readinessProbe, port);
    const liveness = () => httpGetProbe(container.livenessProbe, port);
    const composeHealthcheck = () => commandProbe(instances["codemux-a"].healthcheck.test.slice(1), port);
    const imageHealthcheck = () => commandProbe(stage.healthcheck, port);
    assert.equal(await readiness(), 200, "readinessProbe");
    assert.equal(await liveness(), 200, "livenessProbe");
    assert.equal(await composeHealthcheck(), 0, "compose's healthcheck");
    assert.equal(await imageHealthcheck(), 0, "the Dockerfile's HEALTHCHECK");

    // A call in flight keeps it draining: the snippet writes a file once it runs, then waits.
    const mark = join(pod.dir, "data", "in-flight.txt");
    const code = `import { writeFile } from "mcp/servers/fs/writeFile";\nawait writeFile({ path: ${JSON.stringify(mark)}, content: "running" });\nawait new Promise((r) => setTimeout(r, 20_000));\nexport default "done";\n`;
    const call = fetch(`${base}/v1/exec`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ code, timeoutMs: 50_000 }),
    }).catch(() => undefined);
    await until(() => existsSync(mark), "the snippet to run");
    pod.child.kill("SIGTERM");
    await until(async () => (await readiness()) !== 200, "readiness to fail once draining");
    assert.equal(await readiness(), 503, "readinessProbe while draining");
    assert.equal(await liveness(), 200, "livenessProbe while draining: alive");
    assert.equal(await composeHealthcheck(), 1, "compose's healthcheck while draining");
    assert.equal(await imageHealthcheck(), 0, "the Dockerfile's HEALTHCHECK while draining: alive");
    assert.equal(pod.child.exitCode, null, "still draining");
    pod.child.kill("SIGKILL");
    await call;
  });
});

describe("compose's two instances (compose.yaml) behind the shipped nginx config", { skip: !haveParts }, () => {
  test("a client whose instance was killed gets the JSON-RPC session-gone 404 through nginx, starts a new session and goes on", async () => {
    const { instances } = composeFile();
    const names = Object.keys(instances);
    assert.deepEqual(names, ["codemux-a", "codemux-b"]);
    const ports = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await freePort()])));
    // Compose's host names as names that resolve here, and each container's port 3920 as a port of this machine.
    const instanceHosts = Object.fromEntries(names.map((name) => [`${name}:3920`, `localhost:${ports[name]}`]));
    const hosts = { "redis:6379": `127.0.0.1:${redis.port}`, ...instanceHosts };
    const running = await Promise.all(
      names.map((name) => {
        const { command, environment } = instances[name];
        const env = Object.fromEntries(
          Object.entries(environment).map(([key, value]) => [
            key,
            pointed(interpolated(value, { CODEMUX_TOKEN: `me:${SECRET}`, CODEMUX_STATE_KEY: STATE_KEY }), hosts),
          ]),
        );
        return startContainer(name, { args: command.map((arg) => pointed(arg, { ":3920": `:${ports[name]}` })), env });
      }),
    );
    for (const instance of running) writeFileSync(join(instance.dir, imageFolders().data, "hello.txt"), `hello from ${instance.name}\n`);
    nginx = await startNginx((port) => localNginxConfig(readRepoFile("deploy/nginx/codemux.conf"), { addresses: instanceHosts, port }));

    const connect = async () => {
      const client = new Client({ name: "deploy-suite", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(`${nginx.url}/mcp`), { requestInit: { headers: bearer } });
      await client.connect(transport);
      return { client, transport };
    };
    const hello = async (client) => {
      const result = await client.callTool({ name: "call_tool", arguments: { name: "fs__read_text_file", args: { path: "hello.txt" } } });
      return result.content.map((part) => part.text ?? "").join("");
    };

    const first = await connect();
    const owner = running.find((instance) => first.transport.sessionId?.startsWith(`${instances[instance.name].environment.CODEMUX_INSTANCE_ID}.`));
    assert.ok(owner, `a 2025-era session id carrying its instance: ${first.transport.sessionId}`);
    assert.match(await hello(first.client), new RegExp(`hello from ${owner.name}`));

    owner.child.kill("SIGKILL");
    await owner.exited;
    const gone = await hello(first.client).then(
      () => undefined,
      (error) => error,
    );
    assert.ok(gone, "a call on the dead instance's session must fail");
    assert.equal(gone.status, 404, `${gone}`);
    assert.match(String(gone.message), /Session not found: the instance holding this session \(\w+\) is gone\. Start a new session/);
    await first.client.close().catch(() => undefined);

    const again = await connect();
    const survivor = running.find((instance) => instance !== owner);
    assert.match(await hello(again.client), new RegExp(`hello from ${survivor.name}`));
    await again.client.close();
  });
});
