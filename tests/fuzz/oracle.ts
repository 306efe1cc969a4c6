/**
 * The robustness oracle: compiles one input the way `tskernel build --target cuda,wgsl,js` does (the same
 * `compileFiles` and renderer, in-process, with a reused project) and judges the outcome. An input must end
 * accepted — every target's output present, the generated JavaScript loadable — or rejected with error
 * diagnostics that each carry a catalogue code and a span inside the input. Anything else is a failure: an
 * exception (a crash: the CLI would print TSK9001 and exit 70), TSK9001 itself, an unknown code, an error
 * without a location, or a renderer that throws. The time limit and the nvcc / Dawn checks of the outputs
 * are applied by the caller (campaign.ts), which sees the time and the outputs.
 */

import fs from "node:fs";
import path from "node:path";
import type { Project } from "ts-morph";
import { catalogue, compileFiles, createProject, renderDiagnostics } from "../../compiler/index.ts";
import { instantiateJs } from "../../runtime/library.ts";

export type Verdict = "accepted" | "rejected" | "failure";

export interface OracleResult {
  readonly verdict: Verdict;
  /** Why a failure is one; empty otherwise. */
  readonly reason: string;
  /** Distinct diagnostic codes, in order of first appearance. */
  readonly codes: readonly string[];
  readonly ms: number;
  /** Accepted inputs: what the caller hands to nvcc and Dawn. */
  readonly outputs?: {
    /** Absent where every kernel of the input declares targets without it (the `targets` option). */
    readonly cuda?: string;
    readonly wgsl?: string;
    readonly wgslEntryPoints: readonly string[];
    /** A WebGPU limit warning (TSK3006/TSK3007) was given: pipelines need more than Dawn's default limits. */
    readonly beyondDefaultLimits: boolean;
  };
}

export class Oracle {
  private project: Project = createProject();
  private count = 0;

  /** `dir` holds the input file (one name, rewritten for every input: the project reuses it). */
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  judge(text: string): OracleResult {
    // A fresh project now and then keeps memory bounded over long campaigns.
    if (++this.count % 400 === 0) this.project = createProject();
    const file = path.join(this.dir, "input.ts");
    fs.writeFileSync(file, text);
    const start = performance.now();
    let result;
    try {
      result = compileFiles([file], { targets: ["cuda", "wgsl", "js"], project: this.project, baseDir: this.dir });
    } catch (error) {
      this.project = createProject();
      return failure(`crash: ${describe(error)}`, [], performance.now() - start);
    }
    const ms = performance.now() - start;
    const codes = [...new Set(result.diagnostics.map((d) => d.code))];
    try {
      renderDiagnostics(result.diagnostics, { baseDir: this.dir, readFile: (f) => (f === file ? text : undefined) });
    } catch (error) {
      return failure(`the renderer threw: ${describe(error)}`, codes, ms);
    }
    for (const d of result.diagnostics) {
      if (!(d.code in catalogue)) return failure(`uncatalogued code ${d.code}: ${d.message}`, codes, ms);
      if (d.code === "TSK9001") return failure(`internal error: ${d.message}`, codes, ms);
      if (d.severity !== "error") continue;
      if (!d.span) return failure(`${d.code} without a location: ${d.message}`, codes, ms);
      if (d.span.file !== file || d.span.start < 0 || d.span.end < d.span.start || d.span.end > text.length) {
        return failure(`${d.code} located outside the input (${d.span.file}:${d.span.start}-${d.span.end}): ${d.message}`, codes, ms);
      }
    }
    if (!result.ok) {
      if (!result.diagnostics.some((d) => d.severity === "error")) return failure("not ok, but no error diagnostic", codes, ms);
      return { verdict: "rejected", reason: "", codes, ms };
    }
    const out = result.files[0];
    if (!out) return failure("accepted, but no file output", codes, ms);
    if (out.specializations.length === 0) return { verdict: "accepted", reason: "", codes, ms };
    // Each target has output exactly when some specialization is built for it (a kernel's `targets` may skip it).
    for (const target of ["cuda", "wgsl", "js"] as const) {
      const wanted = out.specializations.some((s) => s.targets.includes(target));
      if (wanted !== (out[target] !== undefined)) return failure(`accepted, but the ${target} output is ${wanted ? "missing" : "there although every kernel skips it"}`, codes, ms);
    }
    try {
      const functions = out.js ? instantiateJs(out.js.factoryBody) : {};
      const checked = out.js ? instantiateJs(out.js.checkedFactoryBody) : {};
      for (const name of out.js?.functions ?? []) {
        if (name === undefined) continue;
        if (typeof functions[name] !== "function" || typeof checked[name] !== "function") return failure(`generated JS lacks the function ${name}`, codes, ms);
      }
    } catch (error) {
      return failure(`generated JS does not load: ${describe(error)}`, codes, ms);
    }
    return {
      verdict: "accepted",
      reason: "",
      codes,
      ms,
      outputs: {
        cuda: out.cuda?.source,
        wgsl: out.wgsl?.source,
        wgslEntryPoints: out.wgsl?.entries.flatMap((e) => (e ? [e.entryPoint] : [])) ?? [],
        beyondDefaultLimits: result.diagnostics.some((d) => d.code === "TSK3006" || d.code === "TSK3007"),
      },
    };
  }
}

function failure(reason: string, codes: readonly string[], ms: number): OracleResult {
  return { verdict: "failure", reason, codes, ms };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const frames = (error.stack ?? "").split("\n").slice(1, 4).map((l) => l.trim()).join(" | ");
  return `${error.name}: ${error.message.slice(0, 300)} [${frames}]`;
}
