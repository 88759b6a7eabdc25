// Each public @codemux library on its own: packed with `pnpm pack` (workspace ranges replaced),
// installed with npm into an empty project together with only the tarballs of the @codemux
// packages it depends on (they are not on the registry), each of its entry points imported, and
// its README example (examples/*.ts, marked in the README) run there with plain Node.
// Needs a build first (`pnpm build`); run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import ts from "typescript";
import { freshProject, NPM_INSTALL_FLAGS, runCommand } from "../lib/fresh-project.mjs";
import { readmeBlocks } from "../lib/readme-examples.mjs";
import { packAll, tarballName, withWorkspaceDependencies, workspacePackages } from "../lib/workspace.mjs";

const work = mkdtempSync(join(tmpdir(), "codemux-library-packs-"));
const packs = join(work, "packs");
const env = { ...process.env, CODEMUX_HOME: join(work, "home"), npm_config_prefer_offline: "true", npm_config_update_notifier: "false" };
const libraries = workspacePackages().filter((pkg) => pkg.name.startsWith("@codemux/"));

before(() => {
  mkdirSync(packs, { recursive: true });
  packAll(libraries, packs);
});

after(() => rmSync(work, { recursive: true, force: true }));

/** A registry spec for a package an example needs besides the library: the version its packed manifest declares (catalog: resolved), else the latest. */
function registrySpec(manifest, name) {
  const { dependencies = {}, devDependencies = {} } = manifest;
  const range = dependencies[name] ?? devDependencies[name];
  return range && !range.startsWith("workspace:") ? `${name}@${range}` : name;
}

/** The module names a package's `exports` offers (`@codemux/pool`, `@codemux/codegen/node`, ...). */
function entryPoints(pkg) {
  const keys = Object.keys(pkg.manifest.exports ?? { ".": null }).filter((key) => !key.endsWith(".json"));
  return keys.map((key) => (key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`));
}

/** What the engine, the bundler and the type checker bring: a library that does not run snippets must never install them. */
const SNIPPET_RUNTIME = [
  "esbuild",
  "quickjs-emscripten-core",
  "@jitl/quickjs-wasmfile-release-sync",
  "sucrase",
  "typescript",
  "@codemux/sandbox",
  "@codemux/server",
];
/** Packages each library's install must not contain (its own dependency closure, before any example's extras). */
const NEVER_INSTALLS = {
  "@codemux/core": [...SNIPPET_RUNTIME, "@modelcontextprotocol/sdk", "zod"],
  "@codemux/catalog": [...SNIPPET_RUNTIME, "@modelcontextprotocol/sdk"],
  // wrapWithProxy wraps the caller's own SDK server: the SDK is a peer, and the hooks alone stay small.
  "@codemux/hooks": [...SNIPPET_RUNTIME, "@modelcontextprotocol/sdk", "ajv"],
  "@codemux/jobs": [...SNIPPET_RUNTIME, "@modelcontextprotocol/sdk", "ajv"],
  "@codemux/pool": SNIPPET_RUNTIME,
};

/** The packages under a project's node_modules (scoped ones as @scope/name). */
function installedPackages(project) {
  const modules = join(project, "node_modules");
  const names = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) for (const inner of readdirSync(join(modules, entry))) names.push(`${entry}/${inner}`);
    else names.push(entry);
  }
  return names;
}

/** Whether a package's built files (code or types) import `name` (or one of its subpaths). */
function distImports(pkg, name) {
  const dist = join(pkg.dir, "dist");
  if (!existsSync(dist)) return false;
  const specifier = new RegExp(`["']${name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}(?:/[^"']*)?["']`);
  return readdirSync(dist, { recursive: true })
    .filter((file) => /\.(?:js|d\.ts)$/.test(String(file)))
    .some((file) => specifier.test(readFileSync(join(dist, String(file)), "utf8")));
}

describe("each @codemux library declares only what it uses", () => {
  for (const pkg of libraries) {
    test(pkg.name, () => {
      const unused = Object.keys(pkg.manifest.dependencies ?? {}).filter((name) => !distImports(pkg, name));
      assert.deepEqual(unused, [], `${pkg.name} declares dependencies its built files never import; every install of it would carry them.`);
    });
  }
});

describe("each @codemux library installs and runs alone", { concurrency: 3 }, () => {
  for (const pkg of libraries) {
    test(pkg.name, async () => {
      const manifest = JSON.parse((await runCommand("tar", ["xzfO", join(packs, tarballName(pkg)), "package/package.json"])).stdout);
      assert.doesNotMatch(JSON.stringify(manifest), /workspace:/, `${pkg.name}'s packed package.json still has workspace: ranges.`);

      const examples = readmeBlocks(pkg.dir).filter((block) => block.kind === "example");
      const tarballs = withWorkspaceDependencies(pkg)
        .filter((dep) => !dep.manifest.private || assert.fail(`${pkg.name} depends on the private package ${dep.name}.`))
        .map((dep) => join(packs, tarballName(dep)));
      // An example's extras: another @codemux library as its packed tarball (with its own), anything else from the registry.
      const extras = [
        ...new Set(
          examples
            .flatMap((example) => example.installs)
            .flatMap((name) => {
              const library = libraries.find((other) => other.name === name);
              return library ? withWorkspaceDependencies(library).map((dep) => join(packs, tarballName(dep))) : [registrySpec(manifest, name)];
            }),
        ),
      ];
      const project = await freshProject(join(work, pkg.name.replace("/", "-")), tarballs);
      // The library's own closure, before an example adds what it needs.
      const brought = installedPackages(project).filter((name) => (NEVER_INSTALLS[pkg.name] ?? []).includes(name));
      assert.deepEqual(brought, [], `npm install ${pkg.name} brings packages it does not use.`);
      if (extras.length > 0) {
        const added = await runCommand("npm", [...NPM_INSTALL_FLAGS, ...extras], { cwd: project, env });
        assert.equal(added.code, 0, `npm install ${extras.join(" ")} (the examples' extras) failed:\n${added.stderr}`);
      }

      // Every entry point loads with only the declared dependencies installed.
      const imports = entryPoints(pkg)
        .map((name) => `await import(${JSON.stringify(name)});`)
        .join("\n");
      writeFileSync(join(project, "entry-points.mjs"), `${imports}\nconsole.log("loaded");\n`);
      const loaded = await runCommand(process.execPath, ["entry-points.mjs"], { cwd: project, env });
      assert.equal(loaded.code, 0, `importing ${entryPoints(pkg).join(", ")} from a fresh install failed:\n${loaded.stderr}`);

      for (const example of examples) {
        const source = readFileSync(join(pkg.dir, example.file), "utf8");
        assert.equal(example.code, source, `${pkg.name}: the README block differs from ${example.file}.`);
        // Types stripped only; the example runs as the README shows it, with plain Node.
        const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
        const script = `${example.file.replace(/[/\\]/g, "-").replace(/\.ts$/, "")}.mjs`;
        writeFileSync(join(project, script), outputText);
        const run = await runCommand(process.execPath, [script], { cwd: project, env, timeoutMs: 120_000 });
        assert.equal(run.code, 0, `${pkg.name}: ${example.file} failed in a fresh project:\n${run.stderr}`);
        assert.notEqual(run.stdout.trim(), "", `${pkg.name}: ${example.file} printed nothing.`);
        const output = readmeBlocks(pkg.dir).find((block) => block.kind === "output" && block.file === example.file);
        if (output) assert.ok(run.stdout.includes(output.code.trimEnd()), `${pkg.name}: ${example.file} did not print the README's output block.`);
      }
    });
  }
});
