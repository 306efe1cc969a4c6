/**
 * Vitest's settings for `npm test` (and so CI): which files are tests, their time limits, and how many test
 * files run at once.
 */

import os from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts", "compiler/**/*.test.ts", "runtime/**/*.test.ts", "cli/**/*.test.ts", "plugin/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One test file per core. Vitest's default keeps a core for its own process (cores − 1), which on the 2-core
    // CI machine ran the files one at a time, although the main process is idle while they run and much of a
    // file's time is spent waiting on a child process (nvcc, tsc, npm, cmake, Chromium) or in one JavaScript
    // thread. On the 2-core development machine (shared, so under other work) two at a time took 155 s where one
    // at a time took 221 s for package, cli, cli/build and generated-code, and 179 s against 228 s for ten
    // mid-sized files (2026-11-27).
    // Each file still runs in its own process, and the files that write under build/ use their own folders.
    maxWorkers: os.availableParallelism(),
  },
});
