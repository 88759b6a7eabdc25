#!/usr/bin/env node
// Fails when docs/README.md (the map of docs/) does not reach a document there, or a link between
// them names a missing file (issue 45 item 10; the rules are scripts/lib/docs-map.mjs).
import { docsMapProblems } from "./lib/docs-map.mjs";
import { root } from "./lib/workspace.mjs";

const problems = docsMapProblems(root);
for (const problem of problems) console.error(problem);
if (problems.length > 0) process.exit(1);
console.log("docs: docs/README.md reaches every document in docs/, and no link there is broken.");
