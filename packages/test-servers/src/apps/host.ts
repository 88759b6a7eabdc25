/**
 * A host page's side of MCP Apps for codemux's browser tests (bundled into app-host.global.js): the
 * ext-apps AppBridge renders an app's HTML in a sandboxed iframe and hands it the tool's input and result;
 * the app's tool calls go to `window.hostCallTool`, which the test wires to its MCP client of codemux.
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

declare global {
  interface Window {
    hostCallTool(params: unknown): Promise<unknown>;
    renderApp(options: { html: string; input: Record<string, unknown>; result: unknown }): Promise<void>;
  }
}

window.renderApp = async ({ html, input, result }) => {
  const iframe = document.createElement("iframe");
  iframe.id = "app";
  // The app's own origin is opaque: it reaches nothing of the host's but the messages it sends.
  iframe.setAttribute("sandbox", "allow-scripts");
  document.body.append(iframe);
  const bridge = new AppBridge(null, { name: "test-host", version: "1.0.0" }, { serverTools: {} });
  bridge.oncalltool = async (params) => (await window.hostCallTool(params)) as never;
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  // Listening before the app loads: it says hello as its script runs. The window proxy outlives the navigation to srcdoc.
  const frame = iframe.contentWindow as Window;
  await bridge.connect(new PostMessageTransport(frame, frame));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result as never);
};
