#!/usr/bin/env node
// Lists the functions and methods of the packages' and apps' sources (tests left out) longer than N lines
// (80 by default), longest first: node scripts/long-functions.mjs [N]. A measure for issue 45 item 8, not a gate.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { root } from "./lib/workspace.mjs";

const most = Number(process.argv[2] ?? 80);
const files = execFileSync("git", ["ls-files", "packages/*/src/**.ts", "apps/*/src/**.ts"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((file) => file && !file.endsWith(".test.ts") && !file.endsWith(".test-d.ts") && !file.endsWith(".d.ts"));
const found = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
  const line = (position) => source.getLineAndCharacterOfPosition(position).line;
  const visit = (node, owner) => {
    let name;
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessor(node))
      name = node.name?.getText() ?? "constructor";
    else if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent)) name = node.parent.name.getText();
    const inClass = ts.isClassDeclaration(node) ? node.name?.getText() : owner;
    if (name && node.body) {
      const lines = line(node.end) - line(node.getStart()) + 1;
      const qualified = owner && !ts.isFunctionDeclaration(node) && !ts.isVariableDeclaration(node.parent) ? `${owner}.${name}` : name;
      if (lines > most) found.push({ lines, where: `${file}:${line(node.getStart()) + 1}`, qualified });
    }
    ts.forEachChild(node, (child) => visit(child, inClass));
  };
  visit(source, undefined);
}
found.sort((a, b) => b.lines - a.lines);
for (const { lines, where, qualified } of found) console.log(`${String(lines).padStart(4)}  ${qualified}  ${where}`);
console.log(`${found.length} functions over ${most} lines`);
