/**
 * Checks, after the fact, the mismatches a CUDA leg of the differential fuzzer recorded (bench/fuzz-cuda.ts,
 * run with the comparison of the time) against the reference under CUDA's rule for float Math.min/max, which
 * ignore a NaN operand (fminf/fmaxf; docs/language.md §12): each failing program is regenerated from its seed
 * and index (and checked to be the recorded source), its inputs too, and every recorded mismatch's CUDA value is
 * compared with that reference. Records written before failure records spelled NaN and the infinities as text
 * hold `null` for all three: such a value counts as explained where the reference's is not finite. Usage:
 *   node fuzz-cuda-explain.mjs <folder holding the fuzz-cuda-seed* outputs> [--json out.json]
 */

import fs from "node:fs";
import path from "node:path";
import { evaluate } from "../tests/fuzz/diff/evaluate.ts";
import { generateProgram } from "../tests/fuzz/diff/generate.ts";
import { makeInputs } from "../tests/fuzz/diff/harness.ts";
import { poison } from "../tests/fuzz/diff/compare.ts";
import { printProgram, type OutputBuffer } from "../tests/fuzz/diff/program.ts";
import { inputRng } from "../tests/fuzz/rng.ts";

const [root, ...rest] = process.argv.slice(2);
if (!root) {
  console.error("usage: node fuzz-cuda-explain.mjs <folder> [--json out.json]");
  process.exit(1);
}
const summary = { programs: 0, recorded: 0, explained: 0, recordedAsNull: 0, truncatedPrograms: 0, sourcesMatch: 0, errors: [] as string[], unexplained: [] as string[] };
const asNumber = (v: unknown) => (v === null ? null : typeof v === "string" ? Number(v) : (v as number));
for (const seedDir of fs.readdirSync(root).sort()) {
  const dir = path.join(root, seedDir, "fuzz-cuda-failures");
  if (!fs.existsSync(dir)) continue;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".txt"))) {
    const lines = fs.readFileSync(path.join(dir, file), "utf8").split("\n");
    const [, seed, , index] = lines[0]!.split(" ").map(Number) as number[];
    const rng = inputRng(seed!, index!);
    const program = generateProgram(rng, `fuzz${index}`, { wide: true });
    if (printProgram(program) === fs.readFileSync(path.join(dir, file.replace(/\.txt$/, ".ts")), "utf8")) summary.sourcesMatch++;
    const reference = evaluate(program, makeInputs(program, rng), { minMaxIgnoresNaN: true }) as unknown as Record<OutputBuffer, (number | undefined)[]>;
    summary.programs++;
    if (lines[1]) summary.errors.push(`seed ${seed} program ${index}: ${lines[1]}`);
    const mismatches = lines.slice(2).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { buffer: OutputBuffer; index: number; got: unknown; expected: unknown });
    if (mismatches.length >= 50) summary.truncatedPrograms++;
    for (const m of mismatches) {
      summary.recorded++;
      const want = reference[m.buffer][m.index] ?? poison[m.buffer];
      const got = asNumber(m.got);
      if (got === null) summary.recordedAsNull++;
      const ok = got === null ? !Number.isFinite(want) : got === want || (Number.isNaN(got) && Number.isNaN(want));
      if (ok) summary.explained++;
      else summary.unexplained.push(`seed ${seed} program ${index} ${m.buffer}[${m.index}]: CUDA ${String(m.got)}, reference under CUDA's min/max rule ${want}, plain reference ${String(m.expected)}`);
    }
  }
}
console.log(JSON.stringify(summary, null, 2));
const json = rest.indexOf("--json");
if (json >= 0) fs.writeFileSync(rest[json + 1]!, `${JSON.stringify(summary, null, 2)}\n`);
process.exit(summary.unexplained.length > 0 || summary.errors.length > 0 ? 1 : 0);
