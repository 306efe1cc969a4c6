/**
 * Replays one program of the differential fuzzer for reading: its TypeScript source, the CUDA C the compiler
 * emits for it, and, for each output element named on the command line, the reference's value and the CPU
 * backend's (with the harness's inputs, made from the same seed and index). Bundle and run it inside the
 * repository (the compiler finds its language module from there):
 *   npx esbuild tests/fuzz/diff/show.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=dist/fuzz/show.mjs && node dist/fuzz/show.mjs SEED INDEX [outI:N outU:N outF:N …]
 * `TSK_SHOW_INPUTS=inS:270,inI:3` also prints those input elements.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { compileKernelLibrary } from "../../../runtime/kernels.ts";
import { CpuDevice } from "../../../runtime/cpu/cpu-device.ts";
import { inputRng } from "../rng.ts";
import { evaluate } from "./evaluate.ts";
import { generateProgram } from "./generate.ts";
import { makeInputs } from "./harness.ts";
import { printProgram } from "./program.ts";

const [seed, index] = process.argv.slice(2).map(Number) as [number, number];
const rng = inputRng(seed, index);
const name = `fuzz${index}`;
const program = generateProgram(rng, name);
const source = printProgram(program);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tsk-show-"));
const file = path.join(dir, `${name}.ts`);
fs.writeFileSync(file, source);
const library = compileKernelLibrary([file], ["js", "cuda"]);
const kernel = library.get(name);
console.log(`// ===== seed ${seed} program ${index}: TypeScript =====\n${source}`);
console.log(`// ===== CUDA =====\n${kernel.cuda!.source}`);
const inputs = makeInputs(program, rng);
const expected = evaluate(program, inputs);
const device = new CpuDevice();
const outputs = program.block * program.grid * program.slots;
const outI = device.createBuffer(new Int32Array(outputs));
const outU = device.createBuffer(new Uint32Array(outputs));
const outF = device.createBuffer(new Float32Array(outputs));
await device.launch(kernel, { grid: [program.grid], args: [outI, outU, outF, device.createBuffer(inputs.inI), device.createBuffer(inputs.inU), device.createBuffer(inputs.inF), device.createBuffer(inputs.inS), inputs.sI, inputs.sU, inputs.sF, inputs.sB] });
console.log(`// ===== scalars sI=${inputs.sI} sU=${inputs.sU} sF=${inputs.sF} sB=${inputs.sB}; block ${program.block} grid ${program.grid} slots ${program.slots}`);
const got = { outI: (await device.read(outI)) as Int32Array, outU: (await device.read(outU)) as Uint32Array, outF: (await device.read(outF)) as Float32Array };
const want = process.argv.slice(4);
for (const spec of want) {
  const [buffer, i] = spec.split(":") as ["outI" | "outU" | "outF", string];
  console.log(`${buffer}[${i}]: reference ${expected[buffer][Number(i)]}, cpu ${got[buffer][Number(i)]}`);
}
if (process.env.TSK_SHOW_INPUTS) {
  const at = (name: keyof typeof inputs, i: number) => (inputs[name] as ArrayLike<number>)[i];
  for (const spec of process.env.TSK_SHOW_INPUTS.split(",")) {
    const [buffer, i] = spec.split(":") as [keyof typeof inputs, string];
    console.log(`${buffer}[${i}] = ${at(buffer, Number(i))}`);
  }
}
