/**
 * `npm run fuzz -- --seconds N --seed S`: a robustness campaign on the compiler (campaign.ts), bundled by
 * esbuild into dist/fuzz/fuzz.mjs, which also serves as the child process that judges inputs (`--child`).
 * Options: --count N (stop after N inputs), --only i,j (replay inputs), --out DIR (failures; default a
 * temporary folder), --json FILE (the summary), --nvcc-rate R, --dawn-rate R, --cli-rate R (fractions of
 * inputs checked by nvcc, Dawn and the real CLI). Exit status 1 when any input failed.
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packageRoot } from "../../compiler/index.ts";
import { closeDawn } from "../tools/dawn.ts";
import { runCampaign, runChild } from "./campaign.ts";

const args = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const number = (name: string): number | undefined => {
  const text = value(name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new Error(`${name} expects a number, got '${text}'`);
  return n;
};

if (args[0] === "--child") {
  runChild(args[1]!);
} else {
  const seed = number("--seed") ?? 1;
  const seconds = number("--seconds");
  const count = number("--count");
  const only = value("--only")?.split(",").map(Number);
  const summary = await runCampaign({
    seed,
    seconds: seconds ?? (count === undefined && only === undefined ? 60 : undefined),
    count,
    only,
    root: packageRoot(),
    outDir: value("--out"),
    nvccRate: number("--nvcc-rate"),
    dawnRate: number("--dawn-rate"),
    cliRate: number("--cli-rate") ?? 0.005,
    childScript: fileURLToPath(import.meta.url),
    log: (line) => console.log(line),
  });
  await closeDawn();
  const json = value("--json");
  if (json) {
    fs.mkdirSync(path.dirname(path.resolve(json)), { recursive: true });
    fs.writeFileSync(json, `${JSON.stringify(summary, null, 2)}\n`);
  }
  console.log(
    `seed ${summary.seed}: ${summary.inputs} inputs (${summary.mutated} mutated, ${summary.generated} generated) in ${summary.seconds.toFixed(0)} s: ` +
      `${summary.accepted} accepted, ${summary.rejected} rejected, ${summary.failures.length} failures; ` +
      `nvcc ${summary.nvcc.compiled} compiled in ${summary.nvcc.seconds.toFixed(0)} s (${summary.nvcc.rejected} rejected${summary.nvcc.available ? "" : ", nvcc unavailable"}), ` +
      `Dawn ${summary.dawn.validated} validated (${summary.dawn.rejected} rejected, ${summary.dawn.warned} with warnings), CLI ${summary.cli.runs} runs (${summary.cli.bad} bad); ` +
      `slowest ${(summary.slowestMs / 1000).toFixed(2)} s (${summary.slowestOrigin}); ${summary.retriedSlow} retried after a timeout`,
  );
  for (const failure of summary.failures) console.log(`  #${failure.index} ${failure.origin}: ${failure.reason.slice(0, 300)} (${failure.file})`);
  process.exit(summary.failures.length > 0 ? 1 : 0);
}
