/**
 * Diagnostics as data: a code from the catalogue, its formatted message, the primary span, labelled related
 * spans and free-form notes. Lowering code raises a `DiagnosticError` to abandon one statement or kernel;
 * everything else collects diagnostics in a list and goes on, so one run reports as much as it can.
 */

import { catalogue, formatMessage, type DiagnosticCode, type MessageArg, type Severity } from "./catalogue.ts";
import type { Span } from "./span.ts";

export interface RelatedSpan {
  readonly span: Span;
  readonly message: string;
}

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  readonly span?: Span;
  /** A short label drawn under the primary span. */
  readonly label?: string;
  readonly related: readonly RelatedSpan[];
  readonly notes: readonly string[];
}

export interface DiagnosticExtras {
  label?: string;
  related?: RelatedSpan[];
  notes?: string[];
}

export function makeDiagnostic(
  code: DiagnosticCode,
  span: Span | undefined,
  args: readonly MessageArg[] = [],
  extras: DiagnosticExtras = {},
): Diagnostic {
  return {
    code,
    severity: catalogue[code].severity,
    message: formatMessage(code, args),
    span,
    label: extras.label,
    related: extras.related ?? [],
    notes: extras.notes ?? [],
  };
}

/** Thrown to abandon the construct being lowered; caught where lowering can resume. */
export class DiagnosticError extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(diagnostic.message);
  }
}

/**
 * Thrown where the only thing to say was already said: a use of a name whose declaration failed. Lowering
 * abandons the statement without a second, misleading diagnostic.
 */
export class AlreadyReported extends Error {
  constructor() {
    super("already reported");
  }
}

export function fail(
  code: DiagnosticCode,
  span: Span | undefined,
  args: readonly MessageArg[] = [],
  extras: DiagnosticExtras = {},
): never {
  throw new DiagnosticError(makeDiagnostic(code, span, args, extras));
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}
