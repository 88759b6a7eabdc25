// Each public @codemux library on its own: packed with `pnpm pack` (workspace ranges replaced),
// installed with npm into an empty project together with only the tarballs of the @codemux
// packages it depends on (they are not on the registry), each of its entry points imported, and
// its README example (examples/*.ts, marked in the README) run there with plain Node, after what
// the example's marker says it installs besides.
// Needs a build first (`pnpm build`); run with `pnpm test:packs`.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import ts from "typescript";
import { freshProject, installInto, runCommand } from "../lib/fresh-project.mjs";
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

/** The module names a package's `exports` offers (`@codemux/pool`, `@codemux/pool/stdio`, ...). */
function entryPoints(pkg) {
  const keys = Object.keys(pkg.manifest.exports ?? { ".": null }).filter((key) => !key.endsWith(".json"));
  return keys.map((key) => (key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`));
}

describe("each @codemux library installs and runs alone", { concurrency: 3 }, () => {
  for (const pkg of libraries) {
    test(pkg.name, async () => {
      const manifest = JSON.parse((await runCommand("tar", ["xzfO", join(packs, tarballName(pkg)), "package/package.json"])).stdout);
      assert.doesNotMatch(JSON.stringify(manifest), /workspace:/, `${pkg.name}'s packed package.json still has workspace: ranges.`);

      const examples = readmeBlocks(pkg.dir).filter((block) => block.kind === "example");
      const tarballs = withWorkspaceDependencies(pkg)
        .filter((dep) => !dep.manifest.private || assert.fail(`${pkg.name} depends on the private package ${dep.name}.`))
        .map((dep) => join(packs, tarballName(dep)));
      const project = await freshProject(join(work, pkg.name.replace("/", "-")), tarballs);

      // Every entry point loads with only the declared dependencies installed.
      const imports = entryPoints(pkg)
        .map((name) => `await import(${JSON.stringify(name)});`)
        .join("\n");
      writeFileSync(join(project, "entry-points.mjs"), `${imports}\nconsole.log("loaded");\n`);
      const loaded = await runCommand(process.execPath, ["entry-points.mjs"], { cwd: project, env });
      assert.equal(loaded.code, 0, `importing ${entryPoints(pkg).join(", ")} from a fresh install failed:\n${loaded.stderr}`);

      // Then what the examples install besides: another @codemux library (jobs' example wires the server) from its
      // tarball, anything else from the registry.
      const extras = [...new Set(examples.flatMap((example) => example.installs))].flatMap((name) => {
        const library = libraries.find((lib) => lib.name === name);
        return library ? withWorkspaceDependencies(library).map((dep) => join(packs, tarballName(dep))) : [registrySpec(manifest, name)];
      });
      if (extras.length > 0) await installInto(project, extras);

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
