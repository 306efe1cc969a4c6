/**
 * `tskernel report` once commander has parsed it: targets and defines as `check` reads them, then the report
 * (report.ts) as tables on stdout, or as JSON with `--json`. Diagnostics go to stderr as for `check`.
 */

import { parseDefines, parseTargets } from "../compile-command.ts";
import { expandInputs } from "../inputs.ts";
import { report as reportDiagnostics, type Io } from "../io.ts";
import { buildReport, formatReport } from "./report.ts";

export interface ReportArgs {
  readonly gpu: string;
  readonly target: string;
  readonly define: readonly string[];
  readonly json?: boolean;
}

/** Resolves to the exit status: 1 when the files do not compile or nvcc fails on them. */
export async function reportCommand(args: readonly string[], opts: ReportArgs, io: Io): Promise<number> {
  const { targets, errors: targetErrors } = parseTargets(opts.target);
  const { defines, errors: defineErrors } = parseDefines(opts.define);
  if (targetErrors.length + defineErrors.length > 0) {
    reportDiagnostics([...targetErrors, ...defineErrors], io);
    return 1;
  }
  const inputs = expandInputs(args);
  if (inputs.diagnostics.some((d) => d.severity === "error")) {
    reportDiagnostics(inputs.diagnostics, io);
    return 1;
  }
  const { report, diagnostics } = await buildReport(inputs.files, { gpu: opts.gpu, targets, defines });
  reportDiagnostics([...inputs.diagnostics, ...diagnostics], io);
  if (!report) return 1;
  io.stdout(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report, io.columns)}\n`);
  return 0;
}
