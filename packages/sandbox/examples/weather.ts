import { Sandbox } from "@codemux/sandbox";

const modules: Record<string, string> = {
  "mcp/weather/index.ts": `
    export interface Forecast { city: string; celsius: number }
    export const forecast = (city: string) => __host_call("weather__forecast", { city }) as Promise<Forecast>;
    declare global { function __host_call(name: string, args: unknown): Promise<unknown>; }
  `,
};

const sandbox = new Sandbox();
const run = await sandbox.execute({
  code: `
    import { forecast } from "mcp/weather/index.ts";
    const cities = ["Oslo", "Lima", "Pune"];
    const all = await Promise.all(cities.map(forecast)); // three calls in flight at once
    console.log("fetched", all.length);
    export default all.filter((f) => f.celsius > 20).map((f) => f.city);
  `,
  modules: (specifier) => modules[specifier],
  onCall: async (name, args, { signal }) => ({ city: (args as { city: string }).city, celsius: 25 }),
  timeoutMs: 5_000,
});
console.log(run); // { ok: true, result: ["Oslo", "Lima", "Pune"], stdout: "fetched 3\n", calls: 3, ... }
await sandbox.close();
