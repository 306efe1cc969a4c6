/**
 * `npm run fuzz:diff -- --count N --seed S [--backends cpu,webgpu,cpu-checked] [--seconds T] [--only i,j]
 * [--out DIR] [--json FILE]`: the differential campaign (harness.ts) on this machine, bundled by esbuild
 * like the robustness fuzzer. WebGPU runs on Dawn (SwiftShader where there is no GPU); CUDA runs from
 * bench/fuzz-cuda.ts on the GPU machine. Exit status 1 when any program failed.
 */

import fs from "node:fs";
import path from "node:path";
import { CpuDevice } from "../../../runtime/cpu/cpu-device.ts";
import { createWebGpuDevice } from "../../../runtime/webgpu/dawn.ts";
import { createProject } from "../../../compiler/index.ts";
import type { Backend } from "./compare.ts";
import { runDiffCampaign, type DeviceUnderTest } from "./harness.ts";

const args = process.argv.slice(2);
const value = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const backends = (value("--backends") ?? "cpu,webgpu").split(",") as Backend[];
const devices: DeviceUnderTest[] = [];
for (const backend of backends) {
  if (backend === "cpu") devices.push({ backend, device: new CpuDevice(), target: "js" });
  else if (backend === "cpu-checked") devices.push({ backend, device: new CpuDevice({ checked: true }), target: "js" });
  else if (backend === "webgpu") devices.push({ backend, device: await createWebGpuDevice(), target: "wgsl", finiteMathOnly: true });
  else throw new Error(`unknown backend '${backend}' here (cpu, cpu-checked, webgpu; CUDA runs from bench/fuzz-cuda.ts)`);
}
const summary = await runDiffCampaign({
  seed: Number(value("--seed") ?? 1),
  count: Number(value("--count") ?? 100),
  seconds: value("--seconds") === undefined ? undefined : Number(value("--seconds")),
  only: value("--only")?.split(",").map(Number),
  devices,
  outDir: value("--out"),
  project: createProject(),
  log: (line) => console.log(line),
});
const json = value("--json");
if (json) {
  fs.mkdirSync(path.dirname(path.resolve(json)), { recursive: true });
  fs.writeFileSync(json, `${JSON.stringify(summary, null, 2)}\n`);
}
console.log(`seed ${summary.seed}: ${summary.programs} programs on ${summary.backends.join(", ")} in ${summary.seconds.toFixed(0)} s, ${summary.compared} outputs compared, ${summary.failures.length} failing`);
console.log(`worst errors (ulp): ${JSON.stringify(summary.worstUlps)}`);
for (const d of devices) d.device.dispose();
process.exit(summary.failures.length > 0 ? 1 : 0);
