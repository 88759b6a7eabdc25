import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { filePinBook, loadPlugins, pinApprovals, type LoadedPlugins } from "@codemux/hooks";
import { createJobs, type Jobs } from "@codemux/jobs";
import { Codemux } from "@codemux/server";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer, httpCallRecorders } from "../src/index";
import { config, misbehaving, restAs } from "./helpers";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER && process.env.CI === "true")
  throw new Error(`The admin page's browser tests need chromium at ${CHROMIUM}; install it (apt-get install chromium) or set CHROMIUM_PATH.`);
if (!HAVE_BROWSER) console.warn(`Skipping the admin page's browser tests: no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH).`);
/** `CODEMUX_UI_SCREENSHOTS=1` writes each page's screenshot to docs/ui/ for docs/ui.md. */
const SHOTS = process.env.CODEMUX_UI_SCREENSHOTS === "1" ? resolve(import.meta.dirname, "../../../docs/ui") : undefined;

const ADMIN = "admin-token-0123456789";
const ALICE = "alice-token-0123456789";
/** Markup a hostile server or client puts everywhere the page shows text of theirs. */
const HOSTILE = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><a href="javascript:window.__pwned=3">link</a>`;

describe.skipIf(!HAVE_BROWSER)("the admin page at /ui, in chromium", () => {
  let dir: string;
  let core: Codemux;
  let http: CodemuxHttpServer;
  let plugins: LoadedPlugins;
  let jobs: Jobs;
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];
  const dialogs: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-ui-"));
    const pinFile = join(dir, "pins.json");
    // m__echo was approved with another description (kept in the pin file), m__counter with a definition the file did not keep:
    // the pin plugin quarantines both until an approval.
    // As the pin file keeps a definition: canonical JSON, keys sorted.
    const approvedEcho = {
      description: "Return the text.",
      inputSchema: { properties: { text: { description: "Text to return.", type: "string" } }, required: ["text"], type: "object" },
      name: "echo",
    };
    const pinned = { server: "m", hash: "0".repeat(64), fields: { description: "0".repeat(16) }, firstSeen: new Date().toISOString() };
    await writeFile(pinFile, JSON.stringify({ version: 1, tools: { m__echo: { ...pinned, definition: approvedEcho }, m__counter: pinned } }));
    plugins = await loadPlugins({ config: { plugins: { pin: { file: pinFile } } }, configDir: dir, dataDir: dir });
    jobs = createJobs({ dataDir: dir, agent: false });
    // The server's call recorders (its Activity page), composed into the core as the CLI does.
    const recorders = httpCallRecorders();
    core = new Codemux({
      config: config({
        m: misbehaving("--stderr", HOSTILE),
        h: misbehaving("--name", "hostile"),
        f: misbehaving("--exit-at-start", "--stderr", "the API key is missing"),
        p: { ...misbehaving("--name", "per-principal"), isolation: "principal" },
      }),
      middleware: [plugins.middleware, jobs.middleware, ...recorders.middleware],
      jobs: jobs.runner,
      metaTools: jobs.metaTools,
      dataDir: dir,
    });
    core.onClose(() => jobs.close(), { before: true });
    core.start();
    await core.ready();
    // As the CLI does: the pin plugin sees the catalog, so a changed definition waits before anyone calls it.
    await plugins.toolsChanged(core.catalog.entries());
    http = new CodemuxHttpServer(core, {
      port: 0,
      tokens: [
        { name: "admin", token: ADMIN, scopes: ["admin"] },
        { name: "alice", token: ALICE, scopes: [] },
      ],
      log: () => undefined,
      ui: { approvals: pinApprovals(filePinBook(pinFile)), jobs: jobs.manager },
      recorders,
    });
    await http.listen();
    base = `${http.url}/ui/`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    ({ page } = await openPage());
    await signIn(page, ADMIN);
  }, 60_000);

  /** A fresh browser context (no cookie) whose console errors, page errors and dialogs are collected. */
  async function openPage(): Promise<{ context: BrowserContext; page: Page }> {
    const fresh = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const opened = await fresh.newPage();
    opened.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    opened.on("pageerror", (error) => problems.push(error.message));
    opened.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    return { context: fresh, page: opened };
  }

  async function signIn(on: Page, token: string): Promise<void> {
    await on.goto(`${http.url}/ui`);
    await on.fill("#token", token);
    await on.click("button[type=submit]");
  }

  afterAll(async () => {
    await browser?.close();
    await http?.close();
    await core?.close();
    await plugins?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function shot(name: string, on: Page = page) {
    if (!SHOTS) return;
    await mkdir(SHOTS, { recursive: true });
    await on.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  it("refuses a token without the admin scope at sign-in, and signs an admin in with an HttpOnly, SameSite=Strict cookie for /ui", async () => {
    const { context: own, page: login } = await openPage();
    await login.goto(`${http.url}/ui`);
    expect(new URL(login.url()).pathname).toBe("/ui/login");
    await shot("login", login);
    await signIn(login, ALICE);
    await expect(login.textContent("[role=alert]")).resolves.toContain(
      'token:alice is not an admin: the admin page needs a token whose scopes include "admin"',
    );
    expect(await own.cookies()).toEqual([]);
    problems.length = 0; // the 403 answer itself is logged by chromium as a failed resource
    await login.fill("#token", ADMIN);
    await login.click("button[type=submit]");
    expect(new URL(login.url()).pathname).toBe("/ui/");
    const [cookie] = await own.cookies();
    expect(cookie).toMatchObject({ name: "codemux_ui", path: "/ui", httpOnly: true, sameSite: "Strict" });
    expect(cookie?.value).not.toContain(ADMIN);
    expect(await login.textContent("[data-instance]")).toMatch(/instance .+:\d+ \(pid \d+\)/);
    await own.close();
  });

  it("loads every page without a console error, each naming the instance it shows", async () => {
    for (const [path, name] of [
      ["", "servers"],
      ["tools", "tools"],
      ["activity", "activity"],
      ["jobs", "jobs"],
      ["approvals", "approvals"],
      ["principals", "principals"],
    ]) {
      const response = await page.goto(`${base}${path}`);
      expect(response?.status(), path).toBe(200);
      expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(await page.textContent("[data-instance]")).toContain(`pid ${process.pid}`);
      await shot(name as string);
    }
    expect(problems).toEqual([]);
  });

  it("answers the search as you type, with the search_tools ranking", async () => {
    await page.goto(`${base}tools`);
    await page.locator("#q").pressSequentially("count calls since", { delay: 20 });
    await page.waitForSelector('#search-results a[data-tool="m__counter"]');
    const first = await page.locator("#search-results a[data-tool]").first().getAttribute("data-tool");
    expect(first).toMatch(/__counter$/);
    await shot("tools");
  });

  it("runs a call from the form made from the tool's schema, through the pipeline, and shows it in Activity with its arguments", async () => {
    await page.goto(`${base}tool?name=h__echo`);
    await page.fill('[name="arg:text"]', "hello from the form");
    await page.click("button.primary");
    await expect(page.textContent("pre[data-result]")).resolves.toBe("hello from the form");
    expect(await page.inputValue('[name="arg:text"]')).toBe("hello from the form");
    await shot("tool");
    await page.goto(`${base}activity?tool=h__echo`);
    const row = page.locator("tr[data-call]").first();
    await expect(row.textContent()).resolves.toContain("ui");
    await row.locator("a").first().click();
    await expect(page.textContent("pre[data-arguments]")).resolves.toContain("hello from the form");
    await shot("call");
  });

  it("shows new calls on the Activity page as they happen, without a reload", async () => {
    await page.goto(`${base}activity?tool=h__echo&origin=rest`);
    const before = await page.locator("tr[data-call]").count();
    await restAs(http.url)(ADMIN, "/v1/tools/h__echo/call", { text: "live" });
    await page.waitForFunction((count) => document.querySelectorAll("tr[data-call]").length > count, before);
    await expect(page.locator("tr[data-call] td").nth(1).textContent()).resolves.toBe("token:admin");
  });

  it("shows each server's state and why, and its era", async () => {
    await page.goto(base);
    await expect(page.locator('tr[data-server="f"] td').nth(1).textContent()).resolves.toMatch(/^failed.*the API key is missing/s);
    await expect(page.locator('tr[data-server="h"] td').nth(1).textContent()).resolves.toBe("ready");
    await expect(page.locator('tr[data-server="h"] td').nth(2).textContent()).resolves.toMatch(/^2025 \(2025-/);
  });

  it("masks secrets in the arguments and results it keeps", async () => {
    await restAs(http.url)(ADMIN, "/v1/tools/h__echo/call", { text: "password=hunter2secret and ghp_abcdefghijklmnopqrstuvwxyz0123456789" });
    await page.goto(`${base}activity?tool=h__echo&origin=rest`);
    await page.locator("tr[data-call] a").first().click();
    const shown = `${await page.textContent("pre[data-arguments]")}${await page.textContent("pre[data-result]")}`;
    expect(shown).not.toContain("hunter2secret");
    expect(shown).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
  });

  it("shows a quarantined tool with what changed, and an approval lets the next call through", async () => {
    const callFromForm = async (text: string) => {
      await page.goto(`${base}tool?name=m__echo`);
      await page.fill('[name="arg:text"]', text);
      await page.click("button.primary");
      return page.textContent("pre[data-result]");
    };
    await expect(callFromForm("x")).resolves.toContain("m__echo is quarantined: its definition changed since codemux pinned it");
    await page.goto(`${base}approvals`);
    const section = page.locator('section[data-pending="m__echo"]');
    await expect(section.locator(".diff-del").allTextContents()).resolves.toEqual(['-  "description": "Return the text.",']);
    await expect(section.locator(".diff-add").allTextContents()).resolves.toEqual(['+  "description": "Return the text it is given.",']);
    // Without the approved definition in the file, the page shows the changed fields' new value.
    await expect(page.locator('section[data-pending="m__counter"] h3').first().textContent()).resolves.toBe("description now");
    await shot("approvals");
    await section.locator("button.primary").click();
    expect(await page.locator('section[data-pending="m__echo"]').count()).toBe(0);
    await expect(callFromForm("approved")).resolves.toBe("approved");
  });

  it("keeps a changed tool blocked: the page stops asking, lists it apart, and the tool stays quarantined until approved after all", async () => {
    const rest = restAs(http.url);
    await page.goto(`${base}approvals`);
    await page.locator('section[data-pending="m__counter"] [data-keep-blocked]').click();
    expect(new URL(page.url()).pathname).toBe("/ui/approvals");
    expect(await page.locator('section[data-pending="m__counter"]').count()).toBe(0);
    await expect(page.locator('tr[data-kept-blocked="m__counter"] td').nth(1).textContent()).resolves.toBe("changed: description, inputSchema, name");
    const refused = await rest(ADMIN, "/v1/tools/m__counter/call", {});
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain("an admin chose to keep the new definition blocked");
    await page.reload();
    expect(await page.locator('section[data-pending="m__counter"]').count()).toBe(0);
    await page.locator('tr[data-kept-blocked="m__counter"] button').click();
    expect(await page.locator('tr[data-kept-blocked="m__counter"]').count()).toBe(0);
    expect((await rest(ADMIN, "/v1/tools/m__counter/call", {})).status).toBe(200);
    expect(problems).toEqual([]);
  });

  it("lists a running job and cancels it", async () => {
    const started = await core
      .surface("code")
      .callTool("call_tool", { name: "h__hang", background: true }, { session: core.session("token:alice"), origin: "call_tool" } as never);
    const id = /job_[A-Za-z0-9_-]+/.exec(JSON.stringify(started))?.[0] as string;
    await page.goto(`${base}jobs`);
    await expect(page.locator(`tr[data-job="${id}"]`).textContent()).resolves.toContain("token:alice");
    await page.locator(`tr[data-job="${id}"] a`).click();
    await expect(page.textContent("[data-status]")).resolves.toMatch(/running|queued/);
    await shot("job");
    await page.click("text=Cancel this job");
    await expect(page.textContent("[data-status]")).resolves.toBe("cancelled");
    expect(jobs.manager.get(id, "token:alice")?.status).toBe("cancelled");
  });

  it("restarts a server from the Servers page", async () => {
    const rest = restAs(http.url);
    const before = JSON.stringify((await rest(ADMIN, "/v1/tools/h__counter/call", {})).body);
    await page.goto(base);
    await page.locator('tr[data-server="h"] button').click();
    await core.ready();
    const after = JSON.stringify((await rest(ADMIN, "/v1/tools/h__counter/call", {})).body);
    const pid = (text: string) => /pid\D+(\d+)/.exec(text)?.[1];
    expect(pid(after)).toBeDefined();
    expect(pid(after)).not.toBe(pid(before));
    await page.goto(base);
    // Restarts, the seventh column (after Scan and Last refresh).
    await expect(page.textContent('tr[data-server="h"] td:nth-child(7)')).resolves.toBe("1");
  });

  it("shows a per-principal server's isolation and how many instances run", async () => {
    await page.goto(base);
    await expect(page.textContent('tr[data-server="p"] [data-isolation]')).resolves.toBe("one instance per principal: 0 running");
    await restAs(http.url)(ALICE, "/v1/tools/p__echo/call", { text: "mine" });
    await page.goto(base);
    await expect(page.textContent('tr[data-server="p"] [data-isolation]')).resolves.toBe("one instance per principal: 1 running");
  });

  it("renders hostile tool names, descriptions, results and server stderr inert", async () => {
    const rest = restAs(http.url);
    await rest(ADMIN, "/v1/tools/h__add_tool/call", { name: `evil${HOSTILE}` });
    await rest(ADMIN, "/v1/tools/h__echo/call", { text: HOSTILE });
    await expect.poll(() => core.catalog.entries("h").some((e) => e.name.startsWith("evil"))).toBe(true);
    const pages = ["", "tools?q=evil", "activity", "principals"];
    const callId = await (async () => {
      await page.goto(`${base}activity?tool=h__echo`);
      return page.locator("tr[data-call]").first().getAttribute("data-call");
    })();
    const added = await (async () => {
      await page.goto(`${base}tools?q=evil+run+time`);
      return page.locator("#search-results a[data-tool]").first().getAttribute("data-tool");
    })();
    expect(added).toContain("evil");
    // A form sent back with hostile values shows them again as values only.
    await page.goto(`${base}tool?name=h__echo`);
    await page.fill('[name="arg:text"]', HOSTILE);
    await page.click("button.primary");
    expect(await page.inputValue('[name="arg:text"]')).toBe(HOSTILE);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('a[href^="javascript:"], img[onerror], script:not([src="ui.js"])').count()).toBe(0);
    for (const path of [...pages, `call?id=${callId}`, `tool?name=${encodeURIComponent(added as string)}`]) {
      await page.goto(`${base}${path}`);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), path).toBeUndefined();
      expect(await page.locator('a[href^="javascript:"], img[onerror], script:not([src="ui.js"])').count(), path).toBe(0);
    }
    await page.goto(base);
    await page.locator('tr[data-server="m"] + tr summary').click();
    await expect(page.locator('tr[data-server="m"] + tr pre').textContent()).resolves.toContain("<script>window.__pwned=1</script>");
    await page.goto(`${base}call?id=${callId}`);
    await expect(page.textContent("pre[data-result]")).resolves.toContain("<img src=x onerror=");
    expect(dialogs).toEqual([]);
  });

  it("refuses a state change without the session's CSRF token", async () => {
    const answer = await page.evaluate(async () => {
      const response = await fetch("restart", { method: "POST", body: new URLSearchParams({ server: "h" }) });
      return { status: response.status, text: await response.text() };
    });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain("CSRF token is missing or wrong");
    const forged = await page.evaluate(async () => {
      const response = await fetch("approve", { method: "POST", body: new URLSearchParams({ target: "m__echo", csrf: "guessed" }) });
      return response.status;
    });
    expect(forged).toBe(403);
  });

  it("signs out: the cookie's session no longer opens a page", async () => {
    const { context: own, page: mine } = await openPage();
    await signIn(mine, ADMIN);
    const [cookie] = await own.cookies();
    await mine.click("text=Sign out");
    expect(new URL(mine.url()).pathname).toBe("/ui/login");
    // The old session id, sent again by hand, opens nothing either.
    const replayed = await fetch(`${base}jobs`, { headers: { cookie: `codemux_ui=${cookie?.value}` }, redirect: "manual" });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get("location")).toBe("login");
    await own.close();
  });
});
