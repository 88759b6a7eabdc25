// A snippet run as a background job, collected with jobs output: run with `node examples/background.mjs` after `pnpm build`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJobs } from "@codemux/jobs";
import { parseConfig } from "@codemux/pool";
import { Codemux, createSessionServer } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";

const dataDir = await mkdtemp(join(tmpdir(), "codemux-jobs-example-"));
const jobs = createJobs({ dataDir });
const core = new Codemux({
  config: parseConfig('{"mcpServers":{}}', { file: "example", env: process.env }),
  jobs: jobs.runner,
  metaTools: jobs.metaTools,
  middleware: [jobs.middleware],
  dataDir,
});
core.start();
await jobs.recover();

// Any transport works; an in-memory pair keeps the example self-contained.
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await createSessionServer(core.sessions).connect(serverSide);
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(clientSide);

const started = await client.callTool({ name: "execute_code", arguments: { code: "export default 6 * 7;", background: true } });
const id = /job_[0-9a-f]{12}/.exec(started.content[0].text)[0];
const output = await client.callTool({ name: "jobs", arguments: { action: "output", ids: [id], wait_up_to: 20 } });
console.log(output.structuredContent.jobs[0].status, JSON.parse(output.content[1].text).result);

await client.close();
await jobs.close();
await core.close();
await rm(dataDir, { recursive: true, force: true });
