import { execFileSync } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { ToolSearchIndex, type SearchDocument } from "@codemux/catalog";
import { bm25Baseline } from "./bm25-baseline";

/** Ranks a query; returns tool ids, best first. */
type Ranker = (query: string, limit: number) => string[];

/** Top-1 / top-5 hit rates on queries that each have a set of acceptable tools. */
export interface HitScores {
  queries: number;
  hitAt1: number;
  hitAt5: number;
  mrr: number;
}

/** Graded-relevance scores as mcpproxy-go computes them (baseline_v1.json), and how often the first hit is relevant. */
export interface RecallScores {
  queries: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  firstRelevant: number;
}

export interface SearchMiss {
  query: string;
  expected: string[];
  /** codemux's top 3. */
  got: string[];
}

export interface SplitReport {
  codemux: HitScores;
  bm25: HitScores;
}

export interface SearchQualityReport {
  /** The 22 real catalogs and queries.dev.tsv. */
  realCatalogs: { tools: number; codemux: HitScores; bm25: HitScores; misses: SearchMiss[] };
  /**
   * The project's own splits over the same catalogs (apps/bench/data): `dev` and `dev2` may be
   * tuned on, `heldOut` and `heldOut2` never are; each was written before the ranking it measures
   * (`heldOut2` two days later, before the ranking changes of that day; `dev2` for the word vectors).
   */
  splits: { dev: SplitReport & { misses: SearchMiss[] }; dev2: SplitReport; heldOut: SplitReport; heldOut2: SplitReport };
  /** mcpproxy-go's golden set over its own 45-tool corpus. */
  mcpproxy: { tools: number; codemux: RecallScores; bm25: RecallScores };
}

export interface SearchScaleReport {
  tools: number;
  buildMs: number;
  searchP50Ms: number;
  searchP99Ms: number;
  heapMB: number;
  /** In a fresh process: importing the catalog package, and its first search (which reads the WordNet and word-vector tables). */
  importMs: number;
  firstSearchMs: number;
}

/** Ranks beyond this count as not found, for MRR as for the hit rates. */
const DEPTH = 10;

export async function runSearchQuality(benchDir: string): Promise<SearchQualityReport> {
  const catalogs = join(benchDir, "real-catalogs");
  const docs = await loadRealCatalogs(catalogs);
  const queries = parseQueries(await readFile(join(catalogs, "queries.dev.tsv"), "utf8"));
  const codemux = codemuxRanker(docs);
  const misses: SearchMiss[] = [];
  const codemuxScores = hitScores(queries, codemux, (query, expected, ranked) => {
    if (!expected.includes(ranked[0] ?? "")) misses.push({ query, expected, got: ranked.slice(0, 3) });
  });

  const bm25 = bm25Baseline(docs);
  const devQueries = await loadSplit("dev-queries.json");
  const devMisses: SearchMiss[] = [];
  const dev = {
    codemux: hitScores(devQueries, codemux, (query, expected, ranked) => {
      if (!expected.includes(ranked[0] ?? "")) devMisses.push({ query, expected, got: ranked.slice(0, 3) });
    }),
    bm25: hitScores(devQueries, bm25),
    misses: devMisses,
  };
  const dev2Queries = await loadSplit("dev-2-queries.json");
  const dev2 = { codemux: hitScores(dev2Queries, codemux), bm25: hitScores(dev2Queries, bm25) };
  const heldOutQueries = await loadSplit("held-out-queries.json");
  const heldOut = { codemux: hitScores(heldOutQueries, codemux), bm25: hitScores(heldOutQueries, bm25) };
  const heldOut2Queries = await loadSplit("held-out-2-queries.json");
  const heldOut2 = { codemux: hitScores(heldOut2Queries, codemux), bm25: hitScores(heldOut2Queries, bm25) };
  printSplits({ dev, dev2, heldOut, heldOut2 });

  const proxy = await loadMcpproxy(join(benchDir, "mcpproxy-retrieval"));
  return {
    realCatalogs: { tools: docs.length, codemux: codemuxScores, bm25: hitScores(queries, bm25), misses },
    splits: { dev, dev2, heldOut, heldOut2 },
    mcpproxy: {
      tools: proxy.docs.length,
      codemux: recallScores(proxy.queries, codemuxRanker(proxy.docs)),
      bm25: recallScores(proxy.queries, bm25Baseline(proxy.docs)),
    },
  };
}

/** The splits' table, printed here so that `pnpm bench` shows it before the tables of the report's other sections. */
function printSplits({ dev, dev2, heldOut, heldOut2 }: Record<"dev" | "dev2" | "heldOut" | "heldOut2", SplitReport>): void {
  const three = (s: HitScores) => `${s.hitAt1.toFixed(3)} / ${s.hitAt5.toFixed(3)} / ${s.mrr.toFixed(3)}`;
  const rows: Array<[string, string]> = [
    [`dev split (${dev.codemux.queries}): codemux hit@1 / hit@5 / MRR`, three(dev.codemux)],
    ["dev split: plain BM25", three(dev.bm25)],
    [`dev split 2 (${dev2.codemux.queries}): codemux`, three(dev2.codemux)],
    ["dev split 2: plain BM25", three(dev2.bm25)],
    [`held-out split (${heldOut.codemux.queries}, never tuned on): codemux`, three(heldOut.codemux)],
    ["held-out split: plain BM25", three(heldOut.bm25)],
    [`held-out split 2 (${heldOut2.codemux.queries}, never tuned on): codemux`, three(heldOut2.codemux)],
    ["held-out split 2: plain BM25", three(heldOut2.bm25)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  process.stdout.write(`\nSearch quality: the project's own splits (apps/bench/data)\n`);
  for (const [label, value] of rows) process.stdout.write(`  ${label.padEnd(width)}  ${value}\n`);
}

function codemuxRanker(docs: readonly SearchDocument[]): Ranker {
  const index = new ToolSearchIndex();
  for (const doc of docs) index.add(doc);
  return (query, limit) => index.search(query, { limit }).map((h) => h.id);
}

interface RawTool {
  name: string;
  title?: string;
  description?: string;
  annotations?: { title?: string };
  inputSchema?: { properties?: Record<string, PropertySchema> };
}

async function loadRealCatalogs(dir: string): Promise<SearchDocument[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  const docs: SearchDocument[] = [];
  for (const file of files) {
    const server = file.slice(0, -".json".length);
    const tools = JSON.parse(await readFile(join(dir, file), "utf8")) as RawTool[];
    for (const tool of tools) {
      docs.push(
        toDocument({
          server,
          name: tool.name,
          description: tool.description,
          properties: tool.inputSchema?.properties,
          title: tool.title ?? tool.annotations?.title,
        }),
      );
    }
  }
  return docs;
}

interface PropertySchema {
  description?: string;
  enum?: unknown[];
  items?: { enum?: unknown[] };
}

interface ToolSource {
  server: string;
  name: string;
  description?: string | undefined;
  properties?: Record<string, PropertySchema> | undefined;
  title?: string | undefined;
}

/** A tool as the catalog indexes it: name, title, description, parameter names, descriptions and enum values. */
function toDocument({ server, name, description, properties = {}, title }: ToolSource): SearchDocument {
  return {
    id: `${server}__${name}`,
    server,
    name,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    parameters: Object.entries(properties).map(([p, schema]) => {
      const values = (schema.enum ?? schema.items?.enum ?? []).filter((v): v is string => typeof v === "string");
      return {
        name: p,
        ...(schema.description === undefined ? {} : { description: schema.description }),
        ...(values.length === 0 ? {} : { values }),
      };
    }),
  };
}

interface HitQuery {
  query: string;
  expected: string[];
}

/** One of the project's own query splits, shipped in apps/bench/data. */
async function loadSplit(file: string): Promise<HitQuery[]> {
  const url = new URL(`../data/${file}`, import.meta.url);
  return (JSON.parse(await readFile(url, "utf8")) as { queries: HitQuery[] }).queries;
}

/** One query a line: the query, a tab, then every acceptable `server__tool`, tab-separated. */
function parseQueries(tsv: string): HitQuery[] {
  return tsv
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const [query = "", ...expected] = line.split("\t");
      return { query, expected };
    });
}

function hitScores(queries: readonly HitQuery[], rank: Ranker, onRanked?: (query: string, expected: string[], ranked: string[]) => void): HitScores {
  let hit1 = 0;
  let hit5 = 0;
  let rr = 0;
  for (const { query, expected } of queries) {
    const ranked = rank(query, DEPTH);
    const first = ranked.findIndex((id) => expected.includes(id));
    if (first === 0) hit1++;
    if (first >= 0 && first < 5) hit5++;
    if (first >= 0) rr += 1 / (first + 1);
    onRanked?.(query, expected, ranked);
  }
  const n = queries.length || 1;
  return { queries: queries.length, hitAt1: hit1 / n, hitAt5: hit5 / n, mrr: rr / n };
}

interface GradedQuery {
  query: string;
  /** Tools of grade >= 1; grade 0 marks a hard negative, which is not relevant. */
  relevant: string[];
}

async function loadMcpproxy(dir: string): Promise<{ docs: SearchDocument[]; queries: GradedQuery[] }> {
  const corpus = JSON.parse(await readFile(join(dir, "corpus_v2.tools.json"), "utf8")) as {
    tools: Array<{ server: string; tool: string; description?: string; schema?: RawTool["inputSchema"] }>;
  };
  const golden = JSON.parse(await readFile(join(dir, "retrieval_golden_v1.json"), "utf8")) as {
    queries: Array<{ query: string; labels: Array<{ tool_id: string; relevance: number }> }>;
  };
  const docs = corpus.tools.map((t) => toDocument({ server: t.server, name: t.tool, description: t.description, properties: t.schema?.properties }));
  const queries = golden.queries.map((q) => ({
    query: q.query,
    // Their ids are `server:tool`; ours `server__tool`.
    relevant: q.labels.filter((l) => l.relevance >= 1).map((l) => l.tool_id.replace(":", "__")),
  }));
  return { docs, queries };
}

/**
 * recall@k: the share of a query's relevant tools found in its top k; MRR: 1 / rank of
 * the first relevant tool. Both averaged over queries.
 */
function recallScores(queries: readonly GradedQuery[], rank: Ranker): RecallScores {
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  let firstRelevant = 0;
  for (const { query, relevant } of queries) {
    const ranked = rank(query, DEPTH);
    const found = (k: number) => relevant.filter((id) => ranked.slice(0, k).includes(id)).length / relevant.length;
    r1 += found(1);
    r5 += found(5);
    const first = ranked.findIndex((id) => relevant.includes(id));
    if (first >= 0) rr += 1 / (first + 1);
    if (first === 0) firstRelevant++;
  }
  const n = queries.length || 1;
  return { queries: queries.length, recallAt1: r1 / n, recallAt5: r5 / n, mrr: rr / n, firstRelevant: firstRelevant / n };
}

const VERBS = "get list create update delete search find read write move copy send fetch run start stop sync export import archive restore validate".split(" ");
const NOUNS =
  "file folder issue comment user team project repository branch commit message channel invoice order customer payment event log metric alert dashboard report record table row column document page image video ticket task job queue bucket secret key token cluster node pod service deployment webhook".split(
    " ",
  );
const WORDS =
  "the a of for in from to with by and all one each new existing current remote local given specific matching optional recent active public private data details status content settings results items entries list value name id".split(
    " ",
  );
const PARAMS = "id name path query limit offset cursor owner repo branch message title body status since until page format force recursive".split(" ");

/** Builds an index of 10,000 generated tools, then times ~500 searches over it. */
export async function runSearchScale(): Promise<SearchScaleReport> {
  const random = mulberry32(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const docs: SearchDocument[] = [];
  const ids = new Set<string>();
  while (docs.length < 10_000) {
    const server = `server${Math.floor(docs.length / 100)}`;
    const verb = pick(VERBS);
    const noun = pick(NOUNS);
    const id = `${server}__${verb}_${noun}`;
    if (ids.has(id)) continue;
    ids.add(id);
    const words = Array.from({ length: 10 + Math.floor(random() * 21) }, () => pick(random() < 0.3 ? NOUNS : WORDS));
    docs.push({
      id,
      server,
      name: `${verb}_${noun}`,
      description: `${capitalize(verb)} ${noun} ${words.join(" ")}.`,
      parameters: Array.from({ length: 2 + Math.floor(random() * 5) }, () => ({
        name: pick(PARAMS),
        description: `The ${pick(WORDS)} ${pick(NOUNS)} to use`,
      })),
    });
  }
  const queries = Array.from({ length: 500 }, () => Array.from({ length: 2 + Math.floor(random() * 4) }, () => pick(random() < 0.5 ? NOUNS : VERBS)).join(" "));

  // The median of three builds, each into a fresh index; the heap is that of the last one.
  const builds: number[] = [];
  let index = new ToolSearchIndex();
  let heapMB = 0;
  for (let run = 0; run < 3; run++) {
    index = new ToolSearchIndex();
    const heapBefore = settledHeap();
    const started = performance.now();
    for (const doc of docs) index.add(doc);
    builds.push(performance.now() - started);
    heapMB = (settledHeap() - heapBefore) / 2 ** 20;
  }
  const buildMs = builds.sort((a, b) => a - b)[1] as number;

  // Warm-up: the first searches after a build compute the collection statistics and warm the JIT.
  for (const query of queries.slice(0, 50)) index.search(query);
  const times: number[] = [];
  for (const query of queries) {
    const t = performance.now();
    index.search(query);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return { tools: index.size, buildMs, searchP50Ms: at(0.5), searchP99Ms: at(0.99), heapMB, ...firstSearch() };
}

/**
 * What the catalog costs a fresh process before its first answer: the import, and the first
 * search, which reads the WordNet and word-vector tables (this process has read them already).
 */
function firstSearch(): { importMs: number; firstSearchMs: number } {
  const script = `
    let t = performance.now();
    const { ToolSearchIndex } = await import(${JSON.stringify(import.meta.resolve("@codemux/catalog"))});
    const importMs = performance.now() - t;
    const index = new ToolSearchIndex();
    index.add({ id: "fs__read_file", server: "fs", name: "read_file", description: "Read the contents of a file.", parameters: [{ name: "path" }] });
    t = performance.now();
    index.search("open a text file");
    process.stdout.write(JSON.stringify({ importMs, firstSearchMs: performance.now() - t }));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as { importMs: number; firstSearchMs: number };
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Heap in use after a full collection, so that the index's own size shows. */
function settledHeap(): number {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  return process.memoryUsage().heapUsed;
}

/** A small seeded PRNG, so every run builds the same tools and queries. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
