/**
 * The compiler's one public entry (`tskernel/compiler`): compile kernel files, render diagnostics, the
 * manifest and its types, the targets and their limits, and the few helpers tools on top of the compiler
 * need (a reusable ts-morph project for warm recompiles, the package root, catalogue diagnostics), and the
 * matrix fragment layouts with TF32 rounding, for tests and tools that check tensor-core results, and the static
 * cost estimate of a kernel (global bytes and flops per thread) that `tskernel report` and the rooflines use. The
 * runtime, the CLI and the tests use the compiler only through this file (tests/layering.test.ts checks it).
 */

export { compileFiles, type CompileOptions, type CompileResult, type FileOutput, type SpecializedKernel } from "./driver.ts";
export { renderDiagnostic, renderDiagnostics, type RenderOptions } from "./diagnostics/render.ts";
export { makeDiagnostic, type Diagnostic } from "./diagnostics/diagnostic.ts";
export { catalogue, type DiagnosticCode } from "./diagnostics/catalogue.ts";
export { buildManifest, manifestVersion } from "./manifest.ts";
export { emitTorchModule, pythonModuleName, snakeCase, type TorchModuleInput } from "./backends/torch-module.ts";
export { applyFormulaOp, cFormula, foldFormula, pythonFormula } from "./backends/formula.ts";
export { parseFormula } from "./frontend/signature.ts";
export type { Manifest, ManifestDim, ManifestFormula, ManifestKernel, ManifestParam, ManifestScalarType, ManifestSignature, ManifestTarget, ManifestTensor, ManifestWgslBinding, ManifestWgslLayout, ManifestWgslUniformField } from "./lang/manifest.ts";
export { targetLimits, targetNames, type TargetLimits, type TargetName } from "./backends/targets.ts";
export { scalars, targetScalars, type AnyScalar, type Support, type TargetScalar } from "./ir/types.ts";
export { createProject, languageModulePath, packageRoot } from "./frontend/program.ts";
export { mma16Helper, warpgroupMarker } from "./backends/cuda-matrix.ts";
export { bitSteps, boxIndex, fragmentElementPosition, fragmentLayout, fragmentLayouts, ldmatrixElements, ldmatrixPlan, ldmatrixRowStart, matrixShapes, mmaHalfRegisters, mmaM16n8k16Layouts, mmaM16n8k16Reference, roundTf32, roundTf32Even, swizzle128, swizzleIndex, truncateTf32, wgmmaM64k32Reference, wgmmaOperandIndex, type FragmentLayout, type LdmatrixPlan, type ShapeInfo } from "./ir/matrix.ts";
export { estimateCost, formatPolynomial, intensity, leadingTerms, type CostEstimate, type Polynomial } from "./cost.ts";
