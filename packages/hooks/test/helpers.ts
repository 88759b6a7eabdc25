import type { Logger } from "@codemux/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Tests of plugins running inside codemux live with the server (packages/server/test/plugins): hooks builds and tests without it.

export function tempDir(prefix = "hooks-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A logger that keeps what it is told, to check that a failing plugin is named. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: keep("debug"), info: keep("info"), warn: keep("warn"), error: keep("error") };
}

export interface ClientOptions {
  /** Answers the server's elicitation requests; the client declares elicitation when given. */
  elicit?: (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  /** Answers sampling requests; the client declares sampling when given. */
  sample?: (request: CreateMessageRequest["params"]) => CreateMessageResult | Promise<CreateMessageResult>;
}

/** An SDK client that declares (and answers) elicitation and sampling when asked to. */
export function connectClient(options: ClientOptions): Client {
  const capabilities: ClientCapabilities = {
    ...(options.elicit ? { elicitation: {} } : {}),
    ...(options.sample ? { sampling: {} } : {}),
  };
  const client = new Client({ name: "test", version: "1.0.0" }, { capabilities });
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params));
  }
  if (options.sample) {
    const sample = options.sample;
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => sample(request.params));
  }
  return client;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}
