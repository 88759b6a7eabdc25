import { build, stop } from "esbuild";
const shapes = {
  bang: (n) => `export default ${"!\n".repeat(n)}1;`,
  assign: (n) => `let a; export default ${"a=\n".repeat(n)}1;`,
  arrow: (n) => `export default ${"a=>\n".repeat(n)}1;`,
  paren: (n) => `export default ${"(\n".repeat(n)}1${")\n".repeat(n)};`,
};
for (const [name, f] of Object.entries(shapes)) for (const n of [60_000, 120_000]) {
  const t = performance.now();
  try { await build({ stdin: { contents: f(n), loader: "ts" }, bundle: true, write: false, logLevel: "silent" }); console.log(name, n, "ok", Math.round(performance.now() - t)); }
  catch (e) { console.log(name, n, String(e).slice(0, 60), Math.round(performance.now() - t)); await stop(); }
}
