// README examples that tests run. In a package README, an example is a ```ts block right after
// a marker line naming its file, and optionally what a fresh project installs besides the package:
//   <!-- example: examples/serve.ts; installs: @modelcontextprotocol/server-filesystem -->
//   (an @codemux library named there is installed from its packed tarball, as the library itself is)
// A block after `<!-- output of: examples/x.ts -->` is text that running the example prints.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const MARKER = /^<!-- (example|output of): ([^\s;]+)(?:; installs: ([^>]*?))? -->\n```(\w*)\n([\s\S]*?)^```$/gm;

/** The marked blocks of `<packageDir>/README.md`: `{ kind, file, installs, lang, code }`. */
export function readmeBlocks(packageDir) {
  const readme = join(packageDir, "README.md");
  if (!existsSync(readme)) return [];
  const text = readFileSync(readme, "utf8");
  return [...text.matchAll(MARKER)].map((match) => ({
    kind: match[1] === "example" ? "example" : "output",
    file: match[2],
    installs: (match[3] ?? "").split(/\s+/).filter(Boolean),
    lang: match[4],
    code: match[5],
  }));
}

/** The README's example block for `file` (e.g. "examples/serve.ts"), and the file's text; throws when the block is missing. */
export function readmeExample(packageDir, file) {
  const block = readmeBlocks(packageDir).find((b) => b.kind === "example" && b.file === file);
  if (!block) throw new Error(`${join(packageDir, "README.md")} has no block marked <!-- example: ${file} -->.`);
  return {
    readme: block.code,
    file: readFileSync(join(packageDir, file), "utf8"),
    output: readmeBlocks(packageDir).find((b) => b.kind === "output" && b.file === file)?.code,
  };
}
