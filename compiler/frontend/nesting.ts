/**
 * The nesting limit that keeps every recursive phase of the compiler — TypeScript's parser, binder and
 * checker, and tskernel's lowering, passes and printers — within the JavaScript stack. It is checked before
 * each phase recurses: the bracket depth on the raw text before TypeScript parses it (the parser recurses
 * once per bracket), then the depth of the syntax tree, walked with an explicit stack, before anything walks
 * it recursively. A file over the limit gets TSK1050 where it crosses it and is compiled no further.
 *
 * The limit sits well below what the phases survive on Node's default stack of about 1 MB (nested calls, the
 * costliest construct, overflow TypeScript's checker at about 400 levels), so the outcome does not depend on
 * how much stack the caller already uses. Should a phase still run out of stack — a construct costlier than
 * measured, or a deep file that a kernel file imports — `stackOverflowDiagnostic` turns the RangeError into
 * TSK1051 at the deepest point of the file instead of a crash.
 */

import { ts, type Project, type SourceFile } from "ts-morph";
import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";

/** Levels of the syntax tree (from the file's top) that a source file may use. */
export const maxNestingDepth = 256;

const notes = [
  `parentheses, operators, calls, statements and blocks each add a level; tskernel accepts ${maxNestingDepth}`,
  "split the expression into several statements with local variables, or move nested parts into helper functions",
];

/**
 * Scans the text as TypeScript tokens (iteratively) and reports the first bracket — `(`, `[`, `{` or a
 * template's `${` — that opens level `maxNestingDepth + 1`. Regular expressions are not told apart from
 * division here; kernels cannot contain them, and an unbalanced closer only lowers the count.
 */
export function checkBracketDepth(file: string, text: string): Diagnostic | undefined {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, /* skipTrivia */ true, ts.LanguageVariant.Standard, text);
  // What each open bracket is, so that the `}` closing a template's `${` resumes the template.
  const open: ("bracket" | "template")[] = [];
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    let opens: "bracket" | "template" | undefined;
    switch (token) {
      case ts.SyntaxKind.OpenParenToken:
      case ts.SyntaxKind.OpenBracketToken:
      case ts.SyntaxKind.OpenBraceToken:
        opens = "bracket";
        break;
      case ts.SyntaxKind.TemplateHead:
        opens = "template";
        break;
      case ts.SyntaxKind.CloseParenToken:
      case ts.SyntaxKind.CloseBracketToken:
        open.pop();
        break;
      case ts.SyntaxKind.CloseBraceToken:
        if (open.pop() === "template" && scanner.reScanTemplateToken(false) === ts.SyntaxKind.TemplateMiddle) opens = "template";
        break;
      default:
        break;
    }
    if (!opens) continue;
    open.push(opens);
    if (open.length > maxNestingDepth) {
      const start = scanner.getTokenStart();
      return makeDiagnostic("TSK1050", { file, start, end: scanner.getTokenEnd() }, [maxNestingDepth], { notes });
    }
  }
  return undefined;
}

/** The first node (in source order) deeper than the limit, and the deepest node of the tree. */
function walkDepth(root: ts.Node): { tooDeep?: ts.Node; deepest: ts.Node } {
  const stack: [ts.Node, number][] = [[root, 0]];
  let deepest: [ts.Node, number] = [root, 0];
  let tooDeep: ts.Node | undefined;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest[1]) deepest = [node, depth];
    if (depth > maxNestingDepth) {
      tooDeep ??= node;
      continue;
    }
    const children: ts.Node[] = [];
    ts.forEachChild(node, (child) => {
      children.push(child);
    });
    // Pushed in reverse so that they are visited in source order: the first crossing is reported.
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, depth + 1]);
  }
  return { tooDeep, deepest: deepest[0] };
}

/** TSK1050 at the first node of a parsed file that lies deeper than the limit. */
export function checkTreeDepth(file: string, root: ts.SourceFile): Diagnostic | undefined {
  const { tooDeep } = walkDepth(root);
  if (!tooDeep) return undefined;
  return makeDiagnostic("TSK1050", { file, start: tooDeep.getStart(root), end: tooDeep.getEnd() }, [maxNestingDepth], { notes });
}

/**
 * Puts a file's text into the project, parsed, unless it nests deeper than the limit: then the project is
 * left without it (so no later type check binds it) and the diagnostic is returned instead.
 */
export function addSourceFile(project: Project, file: string, text: string): SourceFile | Diagnostic {
  const existing = project.getSourceFile(file);
  const tooDeep = checkBracketDepth(file, text);
  if (tooDeep) {
    existing?.forget();
    return tooDeep;
  }
  let sourceFile: SourceFile;
  try {
    if (existing && existing.getFullText() === text) sourceFile = existing;
    else {
      existing?.forget();
      sourceFile = project.createSourceFile(file, text, { overwrite: true });
    }
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    project.getSourceFile(file)?.forget();
    return stackOverflowDiagnostic(file, text, "parsing");
  }
  const deep = checkTreeDepth(file, sourceFile.compilerNode);
  if (deep) sourceFile.forget();
  return deep ?? sourceFile;
}

/** Whether an exception is JavaScript running out of stack. */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack size/i.test(error.message);
}

/**
 * TSK1051 for a phase that ran out of stack on a file: at the deepest node of its tree when it parsed, else
 * at the place where parsing a growing prefix of the text first overflows (the parser recursed deepest there).
 */
export function stackOverflowDiagnostic(file: string, text: string, phase: string, root?: ts.SourceFile): Diagnostic {
  let start = 0;
  let end = 0;
  if (root) {
    const { deepest } = walkDepth(root);
    start = deepest.getStart(root);
    end = deepest.getEnd();
  } else {
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (parseOverflows(text.slice(0, mid + 1))) hi = mid;
      else lo = mid + 1;
    }
    start = Math.min(lo, text.length);
    end = Math.min(start + 1, text.length);
  }
  return makeDiagnostic("TSK1051", { file, start, end }, [phase], { notes });
}

function parseOverflows(text: string): boolean {
  try {
    ts.createSourceFile("prefix.ts", text, ts.ScriptTarget.ES2022, false);
    return false;
  } catch (error) {
    if (isStackOverflow(error)) return true;
    throw error;
  }
}
