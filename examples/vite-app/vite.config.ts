// Vite with the tskernel plugin: every `*.kernel.ts` the app imports is compiled to WGSL at build time.
import { defineConfig } from "vite";
import tskernel from "tskernel/plugin/vite";

export default defineConfig({
  plugins: [tskernel()],
  build: { target: "es2022" },
});
