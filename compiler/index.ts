/** The compiler's programmatic API: compile files, render diagnostics, read the manifest types. */

export { compileFiles, type CompileOptions, type CompileResult, type FileOutput, type SpecializedKernel } from "./driver.ts";
export { renderDiagnostic, renderDiagnostics } from "./diagnostics/render.ts";
export type { Diagnostic } from "./diagnostics/diagnostic.ts";
export { catalogue, type DiagnosticCode } from "./diagnostics/catalogue.ts";
export { buildManifest, type Manifest, type ManifestKernel } from "./manifest.ts";
export { targetNames, type TargetName } from "./backends/targets.ts";
