import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [svelte()],
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2020" },
  // Under vitest, "svelte" resolves to its browser build, so a test file
  // that runs in happy-dom (// @vitest-environment happy-dom) can mount
  // components; server-rendering tests import svelte/server themselves.
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  // Every test sees the one table of choices as a snapshot brings it
  // (lib/testdata/choices.json is Go's table, checked by app's tests).
  test: { environment: "node", include: ["src/**/*.test.ts"], setupFiles: ["src/lib/testdata/setup.ts"] },
});
