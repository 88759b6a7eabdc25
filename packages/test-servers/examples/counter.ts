import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [misbehavingServerPath] }));
console.log(await client.callTool({ name: "counter", arguments: {} }));
await client.close();
