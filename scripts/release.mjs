#!/usr/bin/env node
// `pnpm release`: build, check and test everything, then pack every public package into
// dist/packages (or the folder given), ready for `pnpm publish -r` or for installing by hand.
// Versions come from Changesets: run `pnpm version-packages` first to apply the change notes.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { root } from "./lib/workspace.mjs";

const destination = resolve(process.argv[2] ?? resolve(root, "dist/packages"));
const steps = [
  ["pnpm", ["build"]],
  ["pnpm", ["typecheck"]],
  ["pnpm", ["lint"]],
  ["pnpm", ["test"]],
  ["pnpm", ["test:packs"]],
  [process.execPath, [resolve(root, "scripts/pack.mjs"), destination]],
];
for (const [command, args] of steps) {
  console.log(`\n> ${[command === process.execPath ? "node" : command, ...args].join(" ")}`);
  execFileSync(command, args, { cwd: root, stdio: "inherit" });
}
console.log(`\nPacked into ${destination}. Publish with: pnpm publish -r --access public`);
