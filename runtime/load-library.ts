/**
 * Loads a `tskernel build --out dir` output directory in Node: manifest.json and the generated files it
 * names, read from disk, made into a library by library.ts with no compiler present.
 */

import fs from "node:fs";
import path from "node:path";
import type { Manifest } from "../compiler/lang/manifest.ts";
import { libraryFromManifest, type KernelLibrary, type OutputTarget } from "./library.ts";

/** Loads the kernels a `tskernel build --out dir` wrote (with the code of the given targets; default: all). */
export function loadKernelLibrary(dir: string, targets?: readonly OutputTarget[]): KernelLibrary {
  const read = <T>(file: string, how: (absolute: string) => T): T => {
    const absolute = path.join(dir, file);
    try {
      return how(absolute);
    } catch (error) {
      throw new Error(`tskernel: cannot read ${absolute}: ${(error as Error).message}`);
    }
  };
  const manifest = read("manifest.json", (file) => JSON.parse(fs.readFileSync(file, "utf8")) as Manifest);
  return libraryFromManifest(
    manifest,
    {
      text: (file) => read(file, (absolute) => fs.readFileSync(absolute, "utf8")),
      bytes: (file) => read(file, (absolute) => new Uint8Array(fs.readFileSync(absolute))),
    },
    targets,
  );
}
