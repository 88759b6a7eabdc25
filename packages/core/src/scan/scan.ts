import { exfiltration } from "./exfiltration";
import { type Field, type Item, items, type Skipped } from "./fields";
import { decodeTags, type HiddenRun, hiddenRuns, hiddenSeverity, originalSpan, type VisibleText, visibleText } from "./hidden";
import { modelInstructions } from "./instructions";
import { secretReferences } from "./secrets";
import { shadowIndex, shadowing, sharedName } from "./shadowing";
import { quote, type RawFinding, ScanText } from "./text";
import type { ScanFinding, ScanInput, ScanOptions, ScanReport, ScanSeverity, ScanVerdict } from "./types";

/**
 * The bounds every scan holds, whatever a server sends: text past them is not read, and a finding
 * (`oversize`, high) says so, since it would reach the model unchecked. The real catalogs stay far inside
 * (the longest description of 332 tools is 7 KB, the deepest schema 22 levels, the largest 270 nodes).
 */
export const SCAN_LIMITS = {
  /** Characters read of one string. */
  fieldChars: 65_536,
  /** Characters read of one server's definitions in all. */
  totalChars: 2_097_152,
  /** Nesting levels read of one schema. */
  schemaDepth: 64,
  /** Keys and array elements read of one tool, resource or prompt. */
  itemNodes: 20_000,
  /** Findings listed in one report (verdicts count every finding). */
  findings: 500,
} as const;

const SEVERITIES: readonly ScanSeverity[] = ["info", "warn", "high", "critical"];
const rank = (verdict: ScanVerdict) => SEVERITIES.indexOf(verdict as ScanSeverity);

/** Whether a verdict is at least as bad as a severity: `verdictAtLeast(report.tools.get("send"), "high")`. */
export function verdictAtLeast(verdict: ScanVerdict | undefined, severity: ScanSeverity): boolean {
  return verdict !== undefined && rank(verdict) >= rank(severity);
}

const worse = (a: ScanVerdict, b: ScanVerdict): ScanVerdict => (rank(b) > rank(a) ? b : a);

/** Runs of hidden characters listed one by one in a field; the rest are summed up in one finding. */
const HIDDEN_RUNS_LISTED = 16;

function hiddenFindings(field: Field, text: string, runs: HiddenRun[]): ScanFinding[] {
  let zeroWidth = 0;
  for (const run of runs) if (run.kind === "zero-width" && !run.legitimate) zeroWidth += run.count;
  const found: ScanFinding[] = [];
  const more = { runs: 0, start: 0, end: 0, severity: "info" as ScanSeverity };
  for (const run of runs) {
    const judged = hiddenSeverity(run, { name: field.name, zeroWidthInField: zeroWidth });
    if (!judged) continue;
    if (found.length === HIDDEN_RUNS_LISTED) {
      if (more.runs++ === 0) more.start = run.start;
      more.end = run.end;
      more.severity = worse(more.severity, judged.severity) as ScanSeverity;
      continue;
    }
    const spelled = run.kind === "tag" ? decodeTags(text.slice(run.start, run.end)) : "";
    found.push({
      rule: "hidden-characters",
      severity: judged.severity,
      path: String(field.path),
      ...(field.key ? { key: true as const } : {}),
      start: run.start,
      end: run.end,
      message: `Has ${judged.why}${spelled ? `; they spell ${quote(spelled)}` : ""}.`,
    });
  }
  if (more.runs > 0) {
    const { severity, start, end } = more;
    found.push({
      rule: "hidden-characters",
      severity,
      path: String(field.path),
      ...(field.key ? { key: true as const } : {}),
      start,
      end,
      message: `Has ${more.runs} more runs of hidden characters.`,
    });
  }
  return found;
}

function skippedFinding(skipped: Skipped): ScanFinding {
  const why =
    skipped.reason === "depth"
      ? `Nests deeper than ${SCAN_LIMITS.schemaDepth} levels; what is below was not read and would reach the model unchecked.`
      : `Has more than ${SCAN_LIMITS.itemNodes.toLocaleString("en-US")} keys and elements; the rest was not read and would reach the model unchecked.`;
  return { rule: "oversize", severity: "high", path: String(skipped.path), start: 0, end: 0, message: why };
}

/** A field placed in the scan text, and how to map a finding back to it. */
interface Placed {
  field: Field;
  item: Item;
  visible: VisibleText;
}

/**
 * Findings as they come, kept within bounds: every one counts in its item's verdict, and at most
 * `SCAN_LIMITS.findings` of each severity are kept, so hostile text with a million matches costs
 * counts, not memory, and the worst findings are the ones listed.
 */
export class Findings {
  private readonly kept: Record<ScanSeverity, Array<{ finding: ScanFinding; item: number }>> = { critical: [], high: [], warn: [], info: [] };
  private total = 0;
  readonly verdicts: ScanVerdict[];

  constructor(items: number) {
    this.verdicts = new Array<ScanVerdict>(items).fill("clean");
  }

  add(item: number, finding: ScanFinding): void {
    this.total++;
    this.verdicts[item] = worse(this.verdicts[item]!, finding.severity);
    const bucket = this.kept[finding.severity];
    if (bucket.length < SCAN_LIMITS.findings) bucket.push({ finding, item });
  }

  /** How many findings are held in memory (at most `SCAN_LIMITS.findings` of each severity). */
  get held(): number {
    return this.kept.critical.length + this.kept.high.length + this.kept.warn.length + this.kept.info.length;
  }

  /** The worst findings, at most `SCAN_LIMITS.findings`, in the order of the items and fields; and how many were left out. */
  listed(): { findings: ScanFinding[]; omitted: number } {
    const worst = [...this.kept.critical, ...this.kept.high, ...this.kept.warn, ...this.kept.info].slice(0, SCAN_LIMITS.findings);
    worst.sort(
      (a, b) => a.item - b.item || (a.finding.path < b.finding.path ? -1 : a.finding.path > b.finding.path ? 1 : 0) || a.finding.start - b.finding.start,
    );
    return { findings: worst.map((f) => f.finding), omitted: this.total - worst.length };
  }
}

/**
 * Scans what one downstream server sends that reaches the model (tool names, titles, descriptions,
 * input and output schemas, resources, resource templates, prompts and their arguments, the server's
 * instructions) for hidden characters, instructions aimed at the model, requests for secrets,
 * exfiltration, and shadowing of `otherServers`' tools. Synchronous and bounded: at most
 * `SCAN_LIMITS.totalChars` characters are read, each rule in time linear in what it reads.
 */
export function scanDefinitions(input: ScanInput, options: ScanOptions = {}): ScanReport {
  const index = shadowIndex(options.otherServers ?? [], input.tools?.map((t) => t?.name) ?? []);
  const all = items(input);
  const found = new Findings(all.length);
  const text = new ScanText();
  const placed: Placed[] = [];
  let budget: number = SCAN_LIMITS.totalChars;
  const limits = { depth: SCAN_LIMITS.schemaDepth, nodes: SCAN_LIMITS.itemNodes };
  for (const [i, item] of all.entries()) {
    item.fields(limits, (field) => {
      if (budget <= 0) {
        found.add(i, {
          rule: "oversize",
          severity: "high",
          path: item.path,
          start: 0,
          end: 0,
          message: `Was not read from ${field.path} on: the server's definitions passed ${SCAN_LIMITS.totalChars.toLocaleString("en-US")} characters, and the rest would reach the model unchecked.`,
        });
        return false;
      }
      if ("reason" in field) {
        found.add(i, skippedFinding(field));
        return true;
      }
      const read = Math.min(field.text.length, SCAN_LIMITS.fieldChars);
      budget -= read;
      const content = read < field.text.length ? field.text.slice(0, read) : field.text;
      const runs = hiddenRuns(content);
      for (const finding of hiddenFindings(field, content, runs)) found.add(i, finding);
      if (read < field.text.length) found.add(i, oversizeField(field));
      const visible = visibleText(content, runs);
      text.add(visible.text, { name: field.name, params: item.params, ownParam: field.ownParam });
      placed.push({ field, item, visible });
      const shared = field.toolName !== undefined ? sharedName(visible.text, index) : undefined;
      if (shared) found.add(i, { ...shared, path: String(field.path) });
      return true;
    });
  }
  const itemIndex = new Map(all.map((item, i) => [item, i]));
  const emit = (finding: RawFinding) => {
    const at = text.segmentIndexAt(finding.start);
    const { field, item, visible } = placed[at]!;
    const { start, end } = text.segments[at]!;
    // A pattern anchored at a line start may begin on the line break between two fields: the span starts at the field.
    const span = originalSpan(visible, Math.max(finding.start, start) - start, Math.min(finding.end, end) - start);
    found.add(itemIndex.get(item)!, { ...finding, path: String(field.path), ...(field.key ? { key: true as const } : {}), ...span });
  };
  modelInstructions(text, emit);
  secretReferences(text, emit);
  exfiltration(text, emit);
  shadowing(text, index, emit);

  const report: ScanReport = {
    server: input.server,
    verdict: "clean",
    tools: new Map(),
    resources: new Map(),
    prompts: new Map(),
    instructions: "clean",
    ...found.listed(),
  };
  for (const [i, item] of all.entries()) {
    const verdict = found.verdicts[i]!;
    report.verdict = worse(report.verdict, verdict);
    if (item.kind === "instructions") report.instructions = verdict;
    else report[item.kind].set(item.id, worse(report[item.kind].get(item.id) ?? "clean", verdict));
  }
  return report;
}

function oversizeField(field: Field): ScanFinding {
  return {
    rule: "oversize",
    severity: "high",
    path: String(field.path),
    ...(field.key ? { key: true as const } : {}),
    start: SCAN_LIMITS.fieldChars,
    end: field.text.length,
    message: `Is ${field.text.length.toLocaleString("en-US")} characters long; only the first ${SCAN_LIMITS.fieldChars.toLocaleString("en-US")} were read, and the rest would reach the model unchecked.`,
  };
}
