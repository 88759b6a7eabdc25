import { defineConfig } from "vitest/config";
export default defineConfig({
  resolve: { alias: { "@codemux/pool": "/work/main/packages/pool/.orig-dist/index.js" } },
  test: { include: ["test/**/*.test.ts", "src/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 30_000, pool: "forks" },
});
