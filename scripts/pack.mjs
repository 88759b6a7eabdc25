#!/usr/bin/env node
// Packs every public workspace package into one folder (default ./dist/packages), as it would be published.
// Usage: node scripts/pack.mjs [DIR]. It does not build: run `pnpm build` first (or `pnpm release`).
import { mkdirSync, rmSync } from "node:fs";
import { relative, resolve } from "node:path";
import { packAll, root, workspacePackages } from "./lib/workspace.mjs";

const destination = resolve(process.argv[2] ?? resolve(root, "dist/packages"));
rmSync(destination, { recursive: true, force: true });
mkdirSync(destination, { recursive: true });
const packages = workspacePackages();
const files = packAll(packages, destination);
for (const file of files) console.log(relative(process.cwd(), file));
