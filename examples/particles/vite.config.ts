// Vite with the tskernel plugin: nbody.kernel.ts and draw.kernel.ts are compiled to WGSL at build time.
import { defineConfig } from "vite";
import tskernel from "tskernel/plugin/vite";

export default defineConfig({
  plugins: [tskernel()],
  build: { target: "es2022" },
});
