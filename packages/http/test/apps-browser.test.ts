import { APPS_EXTENSION, APP_MIME_TYPE } from "@codemux/core";
import { policiesOf } from "@codemux/server";
import { appHostScriptPath, appServerPath } from "@codemux/test-servers";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, serve, type Served } from "./helpers";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER && process.env.CI === "true")
  throw new Error(`The MCP Apps browser tests need chromium at ${CHROMIUM}; install it (apt-get install chromium) or set CHROMIUM_PATH.`);
if (!HAVE_BROWSER) console.warn(`Skipping the MCP Apps browser tests: no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);

/** What a host that renders apps declares (both eras). */
const UI = { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
type ToolCall = { name: string; arguments?: Record<string, unknown> };
type Result = { content: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean };

/** What the host page script (app-host.global.js) adds to the page. */
interface AppHostPage {
  renderApp(app: { html: string; input: Record<string, unknown>; result: unknown }): Promise<void>;
}

/** The host's MCP client of codemux, in either era: what the host page's bridge needs of it. */
interface Host {
  listTools(): Promise<Array<{ name: string; _meta?: Record<string, unknown> }>>;
  readResource(uri: string): Promise<Array<{ uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> }>>;
  callTool(call: ToolCall): Promise<Result>;
  close(): Promise<void>;
}

/** A 2025-11-25 host (SDK 1.x): it declares the extension at initialize. */
async function legacyHost(url: string, token: string): Promise<Host> {
  const client = new Client({ name: "host-2025", version: "1.0.0" }, { capabilities: UI });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } }));
  expect(client.getServerCapabilities()?.extensions).toHaveProperty([APPS_EXTENSION]);
  return {
    listTools: async () => (await client.listTools()).tools,
    readResource: async (uri) => (await client.readResource({ uri })).contents,
    callTool: async (call) => (await client.callTool(call)) as Result,
    close: () => client.close(),
  };
}

/** A 2026-07-28 host (SDK v2): it declares the extension on each request. */
async function modernHost(url: string, token: string): Promise<Host> {
  const client = new ModernClient({ name: "host-2026", version: "1.0.0" }, { capabilities: UI, versionNegotiation: { mode: "auto" } });
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } }));
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  // codemux's discover answer says it carries apps.
  expect(client.getServerCapabilities()?.extensions).toHaveProperty([APPS_EXTENSION]);
  return {
    listTools: async () => (await client.listTools()).tools,
    readResource: async (uri) => (await client.readResource({ uri })).contents,
    callTool: async (call) => (await client.callTool(call)) as Result,
    close: () => client.close(),
  };
}

/**
 * MCP Apps through codemux in Debian's Chromium: a server made with the ext-apps server helpers, a host
 * page with the ext-apps AppBridge that renders the app codemux serves in a sandboxed iframe, hands it
 * the tool's input and result, and passes the app's button's call (by its server's own tool name) to
 * codemux; passthrough and code mode, a 2025 and a 2026 host, and a hidden server's app refused.
 */
describe.skipIf(!HAVE_BROWSER)("MCP Apps in chromium, through codemux", () => {
  const served: Record<string, Served> = {};
  const origins: Array<{ mode: string; name: string; origin: string }> = [];
  let browser: Browser;

  beforeAll(async () => {
    // Two servers whose app has the same ui:// URI; bob's policy hides b.
    const policies = policiesOf(
      {
        policies: {
          rules: [
            { name: "alice", principals: ["token:alice"], tools: ["*"] },
            { name: "bob", principals: ["token:bob"], tools: ["a"] },
          ],
        },
      },
      "codemux.json",
    );
    const servers = {
      a: { command: process.execPath, args: [appServerPath, "--name", "a"] },
      b: { command: process.execPath, args: [appServerPath, "--name", "b"] },
    };
    const [passthrough, code] = await Promise.all(
      (["passthrough", "code"] as const).map((mode) =>
        serve({}, servers, {
          mode,
          ...(policies ? { policies } : {}),
          middleware: [
            async (ctx, next) => {
              origins.push({ mode, name: ctx.entry.qualifiedName, origin: ctx.origin });
              return next(ctx);
            },
          ],
        }),
      ),
    );
    served.passthrough = passthrough as Served;
    served.code = code as Served;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all(Object.values(served).map((s) => s.close()));
  });

  /** A host page whose bridge passes the app's calls to `host`. */
  async function hostPage(host: Host): Promise<Page> {
    const page = await browser.newPage();
    await page.exposeFunction("hostCallTool", (call: ToolCall) => host.callTool(call));
    await page.setContent("<!doctype html><html><body><h1>test host</h1></body></html>");
    await page.addScriptTag({ path: appHostScriptPath });
    return page;
  }

  /** As a host does when the model calls `tool`: read its app, call it, render the app with the input and result. */
  async function showApp(page: Page, host: Host, { tool, input }: { tool: string; input: Record<string, unknown> }): Promise<void> {
    const listed = (await host.listTools()).find((t) => t.name === tool);
    const uri = (listed?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri as string;
    expect(uri).toBe(`ui://${tool.split("__")[0]}/charts/sales.html`);
    const [content] = await host.readResource(uri);
    expect(content?.mimeType).toBe(APP_MIME_TYPE);
    const result = await host.callTool({ name: tool, arguments: input });
    await page.evaluate((app) => (globalThis as unknown as AppHostPage).renderApp(app), { html: content?.text as string, input, result });
  }

  const cases = [
    { mode: "passthrough", era: "2025", open: legacyHost },
    { mode: "code", era: "2026", open: modernHost },
    { mode: "passthrough", era: "2026", open: modernHost },
    { mode: "code", era: "2025", open: legacyHost },
  ] as const;

  for (const { mode, era, open } of cases)
    it(`renders the app in mode ${mode} for a ${era} host: input and result shown, the button's call through codemux and back`, async () => {
      const host = await open((served[mode] as Served).url, TOKENS.alice);
      const page = await hostPage(host);
      try {
        await showApp(page, host, { tool: "b__show_sales", input: { region: "north" } });
        const app = page.frameLocator("#app");
        await expect.poll(() => app.locator("#status").textContent()).toBe("connected");
        await expect.poll(() => app.locator("#input").textContent()).toBe(JSON.stringify({ region: "north" }));
        await expect.poll(() => app.locator("#result").textContent()).toBe(JSON.stringify({ region: "north", total: 42, server: "b" }));
        await app.locator("#refresh").click();
        await expect.poll(() => app.locator("#refreshed").textContent()).toMatch(/^\{"region":"north","refreshes":\d+,"server":"b"\}$/);
        // The button's call was the app's: the pipeline's middleware saw it with origin app.
        expect(origins).toContainEqual({ mode, name: "b__refresh_sales", origin: "app" });
      } finally {
        await page.close();
        await host.close();
      }
    }, 30_000);

  it("refuses a hidden server's app: not listed, its ui:// resource unknown, and its app's call from a page reaches nothing", async () => {
    const bob = await legacyHost((served.passthrough as Served).url, TOKENS.bob);
    const alice = await legacyHost((served.passthrough as Served).url, TOKENS.alice);
    const page = await hostPage(bob);
    try {
      expect((await bob.listTools()).map((t) => t.name).filter((n) => n.startsWith("b__"))).toEqual([]);
      await expect(bob.readResource("ui://b/charts/sales.html")).rejects.toThrow(/No server offers the resource/);
      // b's app, had bob's host got it anyway, renders, but its button's call reaches no server through bob's session.
      const [content] = await alice.readResource("ui://b/charts/sales.html");
      await page.evaluate((app) => (globalThis as unknown as AppHostPage).renderApp(app), {
        html: content?.text as string,
        input: { region: "west" },
        result: { content: [] },
      });
      const app = page.frameLocator("#app");
      await expect.poll(() => app.locator("#status").textContent()).toBe("connected");
      await app.locator("#refresh").click();
      await expect.poll(() => app.locator("#refreshed").textContent()).toMatch(/^error: .*No tool named \\?"refresh_sales\\?"/);
    } finally {
      await page.close();
      await Promise.all([bob.close(), alice.close()]);
    }
  }, 30_000);
});
