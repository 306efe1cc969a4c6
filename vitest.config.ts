import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts", "compiler/**/*.test.ts", "runtime/**/*.test.ts", "cli/**/*.test.ts", "plugin/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
