// The workspace's publishable packages, found on disk (packages/* and apps/* whose package.json
// is not private), so a package added later is packed and tested without editing a list.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "../..");

/** Every workspace package with its folder and manifest; `includePrivate` adds the private ones. */
export function workspacePackages({ includePrivate = false } = {}) {
  const found = [];
  for (const group of ["packages", "apps"]) {
    const base = join(root, group);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base).sort()) {
      const file = join(base, name, "package.json");
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, "utf8"));
      if (manifest.private && !includePrivate) continue;
      found.push({ dir: join(base, name), name: manifest.name, version: manifest.version, manifest });
    }
  }
  return found;
}

/** The file name `pnpm pack` gives a package's tarball (`@scope/name` -> `scope-name-1.0.0.tgz`). */
export function tarballName({ name, version }) {
  return `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`;
}

/** The workspace packages a package depends on at run time, itself first, then its dependencies' (transitively). */
export function withWorkspaceDependencies(pkg, all = workspacePackages({ includePrivate: true })) {
  const byName = new Map(all.map((p) => [p.name, p]));
  const order = [];
  const visit = (p) => {
    if (order.includes(p)) return;
    order.push(p);
    for (const dep of Object.keys({ ...p.manifest.dependencies, ...p.manifest.peerDependencies })) {
      const inner = byName.get(dep);
      if (inner) visit(inner);
    }
  };
  visit(pkg);
  return order;
}

/**
 * How to run pnpm from a script: the pnpm that started it (`pnpm test:packs` sets npm_execpath,
 * also when pnpm itself came through npx and is not on the PATH), else the one on the PATH.
 */
export function pnpm(args) {
  const execPath = process.env.npm_execpath ?? "";
  return /pnpm/.test(execPath) && /\.c?js$/.test(execPath) ? [process.execPath, [execPath, ...args]] : ["pnpm", args];
}

/** Packs each package into `destination` with `pnpm pack` (which replaces `workspace:*` ranges); returns the tarball paths. */
export function packAll(packages, destination) {
  return packages.map((pkg) => {
    const [command, args] = pnpm(["pack", "--pack-destination", destination]);
    execFileSync(command, args, { cwd: pkg.dir, stdio: ["ignore", "ignore", "inherit"] });
    const file = join(destination, tarballName(pkg));
    if (!existsSync(file)) throw new Error(`pnpm pack of ${pkg.name} did not write ${file}.`);
    return file;
  });
}
