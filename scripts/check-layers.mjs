#!/usr/bin/env node
// Fails when a package's source imports a workspace package above it (SPEC.md §1's layers; the table
// is scripts/lib/layers.mjs). Biome's noImportCycles forbids cycles; this forbids the upward arrow.
import { layerViolations } from "./lib/layers.mjs";
import { root } from "./lib/workspace.mjs";

const problems = layerViolations(root);
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exit(1);
console.log("layers: every package imports only the packages below it (SPEC.md §1).");
