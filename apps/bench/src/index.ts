import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { reportCliStart, type CliStartReport } from "./cli-start";
import { reportHttpLatency, type HttpLatencyReport } from "./http-latency";
import { reportJobSoak, type JobSoakReport } from "./job-soak";
import { reportScaleOut, type ScaleOutReport } from "./scale-out";
import { reportJournalOpen } from "./journal-open";
import { reportPeers, type PeersReport } from "./peers";
import { runLatency, type LatencyReport } from "./latency";
import { benchmarksDir, repoRoot } from "./paths";
import { runSandboxLatency, type SandboxLatency } from "./sandbox-latency";
import { runSearchQuality, runSearchScale, type SearchQualityReport, type SearchScaleReport } from "./search-quality";
import { reportResultFormats } from "./result-formats";
import { reportScan, type ScanBenchReport } from "./scan";
import { round } from "./stats";
import { runTokens, type TokensReport } from "./tokens";

interface BenchReport {
  date: string;
  machine: { node: string; cpus: number; cpu: string };
  benchmarksDir: string | null;
  tokens: TokensReport | null;
  searchQuality: SearchQualityReport | null;
  searchScale: SearchScaleReport | null;
  latency: LatencyReport | null;
  sandbox: SandboxLatency | null;
  http: HttpLatencyReport | null;
  scaleOut: ScaleOutReport | null;
  jobSoak: JobSoakReport | null;
  scan: ScanBenchReport | null;
  peers: PeersReport | null;
  cliStart: CliStartReport | null;
}

/** CODEMUX_BENCH_ONLY=latency,sandbox runs only those sections (tokens, search, scale, latency, sandbox, http, scale-out, job-soak, journal, formats, scan, peers, start). */
const only = new Set(
  (process.env.CODEMUX_BENCH_ONLY ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);
const runs = (section: string) => only.size === 0 || only.has(section);
/** `--quick` or CODEMUX_BENCH_QUICK=1: the peers section in one short round. */
const quick = process.argv.includes("--quick") || process.env.CODEMUX_BENCH_QUICK === "1";

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
const log = (line = "") => process.stdout.write(`${line}\n`);

function table(title: string, rows: Array<[string, string | number, string?]>): void {
  log(`\n${title}`);
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [label, value, note] of rows) log(`  ${label.padEnd(width)}  ${String(value).padStart(10)}${note ? `  ${note}` : ""}`);
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = benchmarksDir();
  log(`codemux benchmarks: node ${process.version}, ${cpus().length} cores`);
  log(
    dir
      ? `Real catalogs and queries: ${dir}`
      : "No ../shared/benchmarks beside the checkout (or $CODEMUX_BENCH_DIR): token and search-quality figures are skipped.",
  );
  const tokens = dir && runs("tokens") ? await reportTokens(dir) : null;
  const searchQuality = dir && runs("search") ? await reportSearchQuality(dir) : null;
  const searchScale = runs("scale") ? await reportSearchScale() : null;
  const latency = runs("latency") ? await reportLatency() : null;
  const sandbox = runs("sandbox") ? await reportSandbox() : null;
  const http = runs("http") ? await reportHttpLatency(table) : null;
  const scaleOut = runs("scale-out") ? await reportScaleOut(table) : null;
  const jobSoak = runs("job-soak") ? await reportJobSoak(table) : null;
  if (runs("journal")) await reportJournalOpen(table);
  if (runs("formats")) await reportResultFormats(table);
  const scan = runs("scan") ? await reportScan(table, dir) : null;
  const peers = runs("peers") ? await reportPeers(table, quick) : null;
  const cliStart = runs("start") ? await reportCliStart(table) : null;

  const report: BenchReport = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown" },
    benchmarksDir: dir ?? null,
    tokens,
    searchQuality,
    searchScale,
    latency,
    sandbox,
    http,
    scaleOut,
    jobSoak,
    scan,
    peers,
    cliStart,
  };
  // An ignored path: a bench run must not rewrite a tracked file.
  const out = join(repoRoot(), "apps/bench/results/latest.json");
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  log(`\nWrote ${out} in ${round((performance.now() - started) / 1000, 1)} s.`);
}

async function reportTokens(dir: string): Promise<TokensReport> {
  const tokens = await runTokens(dir);
  table(`Upfront context (${tokens.servers} real servers, ${tokens.tools} tools; o200k tokens)`, [
    ["listing every tool directly", tokens.directTokens.toLocaleString("en-US")],
    ["codemux tools/list (code mode)", tokens.codemuxTokens.toLocaleString("en-US"), `${pct(tokens.reduction)} less`],
    ["search_tools answer, limit 5 (median)", tokens.searchResponseTokens.median, `max ${tokens.searchResponseTokens.max}`],
    ["tools found by exact name search", `${tokens.reachedBySearch}/${tokens.tools}`],
    ["tools called through call_tool", `${tokens.reachedByCall}/${tokens.tools}`],
  ]);
  for (const miss of tokens.unreached.slice(0, 10)) log(`    unreached: ${miss}`);
  return tokens;
}

async function reportSearchQuality(dir: string): Promise<SearchQualityReport> {
  const searchQuality = await runSearchQuality(dir);
  const { realCatalogs: r, mcpproxy: m } = searchQuality;
  table(`Search quality: queries.dev.tsv (${r.codemux.queries} queries, ${r.tools} tools)`, [
    ["codemux hit@1 / hit@5 / MRR", `${r.codemux.hitAt1.toFixed(3)} / ${r.codemux.hitAt5.toFixed(3)} / ${r.codemux.mrr.toFixed(3)}`],
    ["plain BM25 hit@1 / hit@5 / MRR", `${r.bm25.hitAt1.toFixed(3)} / ${r.bm25.hitAt5.toFixed(3)} / ${r.bm25.mrr.toFixed(3)}`],
  ]);
  table(`Search quality: mcpproxy-go golden set (${m.codemux.queries} queries, ${m.tools} tools)`, [
    ["codemux recall@1 / recall@5 / MRR", `${m.codemux.recallAt1.toFixed(3)} / ${m.codemux.recallAt5.toFixed(3)} / ${m.codemux.mrr.toFixed(3)}`],
    ["plain BM25 recall@1 / recall@5 / MRR", `${m.bm25.recallAt1.toFixed(3)} / ${m.bm25.recallAt5.toFixed(3)} / ${m.bm25.mrr.toFixed(3)}`],
    ["first hit relevant: codemux / plain BM25", `${m.codemux.firstRelevant.toFixed(3)} / ${m.bm25.firstRelevant.toFixed(3)}`],
    ["mcpproxy-go (published) recall@5", "0.681"],
  ]);
  for (const miss of r.misses) log(`    not first: "${miss.query}" -> ${miss.got.join(", ")} (want ${miss.expected.join(" | ")})`);
  return searchQuality;
}

async function reportSearchScale(): Promise<SearchScaleReport> {
  const searchScale = await runSearchScale();
  table(`Search at scale (${searchScale.tools.toLocaleString("en-US")} synthetic tools)`, [
    ["index build", `${round(searchScale.buildMs, 1)} ms`],
    ["search p50 / p99", `${round(searchScale.searchP50Ms, 3)} / ${round(searchScale.searchP99Ms, 3)} ms`],
    ["heap", `${round(searchScale.heapMB, 1)} MB`],
    ["fresh process: import / first search (reads the tables)", `${round(searchScale.importMs, 1)} / ${round(searchScale.firstSearchMs, 1)} ms`],
  ]);
  return searchScale;
}

async function reportLatency(): Promise<LatencyReport> {
  const latency = await runLatency();
  table(`Call latency over stdio (${latency.call.samples} calls, echo on a local server)`, [
    ["direct client p50 / p99", `${latency.call.directP50Ms} / ${latency.call.directP99Ms} ms`],
    ["through codemux call_tool p50 / p99", `${latency.call.codemuxP50Ms} / ${latency.call.codemuxP99Ms} ms`, `x${latency.call.ratioP50} at p50`],
    [
      "5 ms idle before each call: direct / codemux p50",
      `${latency.call.spacedDirectP50Ms} / ${latency.call.spacedCodemuxP50Ms} ms`,
      `x${latency.call.spacedRatioP50}`,
    ],
  ]);
  table("execute_code over stdio", [
    ["trivial snippet p50 / p99", `${latency.execute.trivialP50Ms} / ${latency.execute.trivialP99Ms} ms`],
    [
      "20 chained calls in one snippet",
      `${latency.execute.chain20InOneSnippetMs} ms`,
      `vs ${latency.execute.chain20AsCallToolMs} ms as 20 call_tool round trips (before any model time)`,
    ],
    ["100 calls under Promise.all", `${latency.execute.parallel100Ms} ms`],
    ["ten 400 ms calls awaited together", `${latency.execute.ten400msCallsMs} ms`],
  ]);
  return latency;
}

async function reportSandbox(): Promise<SandboxLatency> {
  const sandbox = await runSandboxLatency();
  table(
    "Sandbox alone (in process)",
    Object.entries(sandbox).map(([k, v]) => [k, typeof v === "number" ? round(v, 3) : String(v)]),
  );
  return sandbox;
}

await main();
process.exit(0);
