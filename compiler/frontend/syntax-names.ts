/**
 * Human names for TypeScript syntax the kernel language does not accept, so that TSK1001 says "classes are
 * not supported in kernels" instead of naming a compiler enum. Anything missing from the table is described
 * by its own text.
 */

import { SyntaxKind, type Node } from "ts-morph";

const names: Partial<Record<SyntaxKind, string>> = {
  [SyntaxKind.StringLiteral]: "a string",
  [SyntaxKind.NoSubstitutionTemplateLiteral]: "a template string",
  [SyntaxKind.TemplateExpression]: "a template string",
  [SyntaxKind.ObjectLiteralExpression]: "an object literal",
  [SyntaxKind.ArrayLiteralExpression]: "an array literal",
  [SyntaxKind.ArrowFunction]: "an arrow function",
  [SyntaxKind.FunctionExpression]: "a function expression",
  [SyntaxKind.ClassExpression]: "a class",
  [SyntaxKind.ClassDeclaration]: "a class",
  [SyntaxKind.NewExpression]: "'new' (dynamic allocation)",
  [SyntaxKind.AwaitExpression]: "'await'",
  [SyntaxKind.YieldExpression]: "'yield'",
  [SyntaxKind.TypeOfExpression]: "'typeof'",
  [SyntaxKind.DeleteExpression]: "'delete'",
  [SyntaxKind.VoidExpression]: "'void'",
  [SyntaxKind.AsExpression]: "a type assertion ('as')",
  [SyntaxKind.SatisfiesExpression]: "'satisfies'",
  [SyntaxKind.TypeAssertionExpression]: "a type assertion",
  [SyntaxKind.NonNullExpression]: "a non-null assertion ('!')",
  [SyntaxKind.NullKeyword]: "null",
  [SyntaxKind.ThisKeyword]: "'this'",
  [SyntaxKind.SuperKeyword]: "'super'",
  [SyntaxKind.RegularExpressionLiteral]: "a regular expression",
  [SyntaxKind.BigIntLiteral]: "a bigint",
  [SyntaxKind.SpreadElement]: "spread ('...')",
  [SyntaxKind.TaggedTemplateExpression]: "a tagged template",
  [SyntaxKind.CommaListExpression]: "the comma operator",
  [SyntaxKind.SwitchStatement]: "'switch'",
  [SyntaxKind.TryStatement]: "'try'",
  [SyntaxKind.ThrowStatement]: "'throw'",
  [SyntaxKind.DoStatement]: "'do … while'",
  [SyntaxKind.ForOfStatement]: "'for … of'",
  [SyntaxKind.ForInStatement]: "'for … in'",
  [SyntaxKind.WithStatement]: "'with'",
  [SyntaxKind.DebuggerStatement]: "'debugger'",
  [SyntaxKind.FunctionDeclaration]: "a nested function",
  [SyntaxKind.InterfaceDeclaration]: "an interface declaration",
  [SyntaxKind.TypeAliasDeclaration]: "a type declaration",
  [SyntaxKind.EnumDeclaration]: "an enum",
  [SyntaxKind.ImportDeclaration]: "an import",
  [SyntaxKind.ObjectBindingPattern]: "destructuring",
  [SyntaxKind.ArrayBindingPattern]: "destructuring",
};

export function describeSyntax(node: Node): string {
  const name = names[node.getKind()];
  if (name) return name;
  const text = node.getText().replace(/\s+/g, " ");
  return `'${text.length > 40 ? `${text.slice(0, 37)}...` : text}'`;
}
