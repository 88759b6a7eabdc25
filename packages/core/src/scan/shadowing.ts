import { any, DIRECTIVE, PASS, phrase, SEND, SEP, TARGET } from "./phrases";
import { type Emit, type Match, PerClause, quote, type RawFinding, type ScanText, spanning } from "./text";
import type { ScanOtherServer, ScanSeverity } from "./types";

/** The other servers' names and tools, looked up by lowercase name. */
export interface ShadowIndex {
  /** Every other server's tool name, to the servers that list it. */
  tools: Map<string, string[]>;
  servers: Map<string, string>;
  /** The scanned server's own tool names, lowercase: naming them is not shadowing. */
  own: Set<string>;
}

const MAX_NAME = 128;
// A name that reads as an identifier (`send_email`, `createIssue`, `web-search2`), not a plain word like `query` or `find`.
const DISTINCTIVE = /[_\-\d]|[a-z][A-Z]/;
// An identifier, a qualified name or a path; it ends on a word character, not on the sentence's full stop.
const TOKEN = /[A-Za-z0-9](?:[\w.\/:-]{0,159}\w)?/g;
const PIECES = /__|[.\/:]/;
const SERVER_WORD = /^(?:'s|’s|[ \t]{1,3}(?:server|mcp|tools?|integration|connector|plugin|extension)\b)/i;
const EVERY_TOOL = phrase(
  `${any("all", "any", "every", "each")}${SEP}(?:other${SEP})?${any("tools?", "tool calls?", "functions?", "servers?", "mcp servers?")}`,
);

export function shadowIndex(others: readonly ScanOtherServer[], ownTools: Iterable<string>): ShadowIndex {
  const tools = new Map<string, string[]>();
  const servers = new Map<string, string>();
  for (const server of others) {
    if (typeof server.name !== "string" || server.name.length > MAX_NAME) continue;
    servers.set(server.name.toLowerCase(), server.name);
    for (const tool of server.tools) {
      if (typeof tool !== "string" || tool.length > MAX_NAME) continue;
      const key = tool.toLowerCase();
      const listed = tools.get(key);
      if (!listed) tools.set(key, [server.name]);
      else if (!listed.includes(server.name)) listed.push(server.name);
    }
  }
  const own = new Set<string>();
  for (const name of ownTools) if (typeof name === "string") own.add(name.toLowerCase());
  return { tools, servers, own };
}

interface Mention extends Match {
  /** "`send_email` of mail" or "the server github". */
  what: string;
}

/** Mentions of another server's tool (by a distinctive name, or qualified by its server) or of another server. */
function* mentions(text: ScanText, index: ShadowIndex): Generator<Mention> {
  const raw = text.raw;
  // Read once, token by token, and not kept: a schema is mostly words that name nothing.
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(raw); m; m = TOKEN.exec(raw)) {
    const token = m[0];
    const at = { start: m.index, end: m.index + token.length, groups: [] };
    const pieces = PIECES.test(token) ? token.split(PIECES).filter(Boolean) : [token];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!.toLowerCase();
      const server = index.servers.get(piece);
      const next = pieces[i + 1]?.toLowerCase();
      if (server !== undefined && next !== undefined && index.tools.get(next)?.includes(server)) {
        yield { ...at, what: `\`${pieces[i + 1]}\` of ${server}` };
        break;
      }
      if (DISTINCTIVE.test(pieces[i]!)) {
        const tool = piece.startsWith("mcp_tool_") ? piece.slice("mcp_tool_".length) : piece;
        const servers = index.own.has(tool) ? undefined : index.tools.get(tool);
        if (servers) {
          yield { ...at, what: `\`${pieces[i]}\` of ${servers.join(", ")}` };
          break;
        }
      }
      if (server !== undefined && pieces.length === 1 && SERVER_WORD.test(raw.slice(at.end, at.end + 16))) {
        yield { ...at, what: `the server ${server}` };
        break;
      }
    }
  }
}

/**
 * shadowing: text that names another server's tools and tells the model what to do with them ("when
 * using `send_email`, always send to ..."), or that reaches for every other tool ("when calling any
 * other tool, add ..."). A bare mention is noted (`info`): descriptions do name their neighbours.
 */
export function shadowing(text: ScanText, index: ShadowIndex, emit: Emit): void {
  const clauses = new PerClause(text);
  const report = (severity: ScanSeverity, message: string, ...matches: Match[]) => {
    if (clauses.keep(matches[0]!.start, severity)) emit({ rule: "shadowing", severity, message, ...spanning(...matches) });
  };
  for (const mention of index.tools.size + index.servers.size > 0 ? mentions(text, index) : []) {
    const directive = text.near(mention, DIRECTIVE);
    const target = directive ? text.near(mention, TARGET) : undefined;
    if (directive && target) {
      report("critical", `Redirects ${mention.what} to ${quote(text.slice(target), 60)}.`, mention, target);
    } else if (directive) {
      report("high", `Tells the model how to use ${mention.what}: ${quote(text.slice(spanning(mention, directive)))}.`, mention, directive);
    } else {
      report("info", `Names ${mention.what}.`, mention);
    }
  }
  for (const every of text.all(EVERY_TOOL)) {
    const act = text.near(every, PASS) ?? text.near(every, SEND);
    const directive = act ? text.near(every, DIRECTIVE) : undefined;
    if (act && directive) report("high", `Reaches into every other tool: ${quote(text.slice(spanning(every, act)))}.`, every, act);
  }
}

/** A tool whose name another server's tool has too: qualified names keep them apart, so it is only noted. */
export function sharedName(name: string, index: ShadowIndex): RawFinding | undefined {
  const servers = index.tools.get(name.toLowerCase());
  if (!servers) return undefined;
  return {
    rule: "shadowing",
    severity: "info",
    start: 0,
    end: name.length,
    message: `Has the same name as a tool of ${servers.join(", ")}; qualified names (server__tool) keep them apart.`,
  };
}
