/**
 * The package's own directory and version, found without the compiler: `tskernel --version` and `--help`
 * load nothing but commander and this file, so they answer in tens of milliseconds instead of waiting for
 * TypeScript (the compiler's `packageRoot` does the same walk, but its module loads ts-morph).
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest folder above this file whose package.json is tskernel's (the checkout, or the installed package). */
export function packageDirectory(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      if (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name === "tskernel") return dir;
    } catch {
      // No package.json here, or not one that parses: keep looking.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function tskernelVersion(): string {
  const dir = packageDirectory();
  if (!dir) return "0.0.0";
  return (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version;
}
