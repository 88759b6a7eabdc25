// docs/README.md is the map of docs/ (issue 45 item 10): every document there is reached by
// following links from it, and no link between documents there points at a missing file.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const MAX_DOC_BYTES = 4 * 1024 * 1024;

// `[text](target)` and `[text](target "title")`; web addresses and in-page anchors are not files.
const LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

function documents(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** The local files a document links to, each with the line it is on; the fragment dropped. */
function linksOf(file) {
  if (statSync(file).size > MAX_DOC_BYTES) return [];
  const links = [];
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, index) => {
      for (const match of line.matchAll(LINK)) {
        const target = match[1].split("#")[0];
        if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        links.push({ line: index + 1, path: resolve(dirname(file), decodeURI(target)) });
      }
    });
  return links;
}

/** Sentences naming each document docs/README.md does not reach and each broken link inside docs/. */
export function docsMapProblems(root) {
  const docs = join(root, "docs");
  const map = join(docs, "README.md");
  if (!existsSync(map)) return ["docs/README.md is missing: it is the map of docs/."];
  const problems = [];
  const reached = new Set([map]);
  const queue = [map];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const { line, path } of linksOf(file)) {
      if (!existsSync(path)) {
        problems.push(`${relative(root, file)}:${line}: links to ${relative(root, path)}, which does not exist.`);
        continue;
      }
      // A folder's link reaches its README.md, if it has one; its other documents need links of their own.
      const target = statSync(path).isDirectory() ? join(path, "README.md") : path;
      if (!target.startsWith(docs + "/") || !target.endsWith(".md") || reached.has(target) || !existsSync(target)) continue;
      reached.add(target);
      queue.push(target);
    }
  }
  for (const file of documents(docs)) {
    if (!reached.has(file)) problems.push(`${relative(root, file)} is not reached from docs/README.md: link it from the map (or from a page the map links).`);
  }
  return problems;
}
