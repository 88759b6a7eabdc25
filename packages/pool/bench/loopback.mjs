// A Transport that answers in process, a macrotask later, as a stdio server would: what a call costs the
// client side alone (no pipe, no other process), so that small changes show above the scheduler's noise.
export class LoopbackTransport {
  onmessage;
  onclose;
  onerror;
  #closed = false;
  async start() {}
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
  async send(message) {
    const line = JSON.stringify(message);
    const { id, method, params } = JSON.parse(line);
    if (id === undefined || method === undefined) return;
    let reply;
    if (method === "initialize") reply = { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "loop", version: "1" } };
    else if (method === "tools/list") reply = { tools: [{ name: "echo", inputSchema: { type: "object" } }] };
    else reply = { content: [{ type: "text", text: String(params.arguments?.text) }] };
    const answer = JSON.stringify({ jsonrpc: "2.0", id, result: reply });
    setImmediate(() => this.onmessage?.(JSON.parse(answer)));
  }
}
