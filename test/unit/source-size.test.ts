/// <reference types="vite/client" />
import { parse } from "@babel/parser";
import { describe, expect, it } from "vitest";

// Sizes a newcomer can read in one sitting: no file under src over MAX_FILE_LINES lines, no
// function whose body is over MAX_FUNCTION_LINES lines. A function is any function declaration,
// method, constructor, accessor, arrow or function expression (components in .tsx files too); its
// body runs from the line of its opening brace (or, for an arrow returning an expression, the
// expression's first line, its parenthesis included) to the line where it ends.
//
// The sources are parsed, not scanned, so braces inside strings, templates, regular expressions,
// comments and JSX text count for nothing. The parser is Babel's: TypeScript's own compiler is one
// 9 MB module, more than the Workers test pool can hand to workerd in one message.

export const MAX_FILE_LINES = 300;
export const MAX_FUNCTION_LINES = 60;

const sources = import.meta.glob("../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const files = Object.entries(sources).map(([key, text]) => ({ file: key.replace(/^(\.\.\/)+/, ""), text }));

/** Lines of a text, as `wc -l` counts them (a last line without a newline counts too). */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** A function whose body is longer than allowed: its name, the line it starts on (1-based) and its body's lines. */
export interface LongFunction {
  name: string;
  line: number;
  lines: number;
}

/** What this test reads of a Babel AST node. */
interface AstNode {
  type: string;
  start: number;
  end: number;
  loc: { start: { line: number }; end: { line: number } };
  [field: string]: unknown;
}

const FUNCTIONS = ["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression", "ClassMethod", "ClassPrivateMethod", "ObjectMethod"];
/** Fields that hold no code. */
const SKIPPED = new Set(["loc", "extra", "leadingComments", "trailingComments", "innerComments", "comments", "tokens"]);

const isNode = (value: unknown): value is AstNode => typeof value === "object" && value !== null && typeof (value as AstNode).type === "string";

/** Every node under `root` (a node before those inside it), each with its parent. */
function* walk(root: AstNode): Generator<{ node: AstNode; parent: AstNode | null }> {
  const stack: { node: AstNode; parent: AstNode | null }[] = [{ node: root, parent: null }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    yield next;
    const children: AstNode[] = [];
    for (const field in next.node) {
      if (SKIPPED.has(field)) continue;
      const value = next.node[field];
      for (const child of Array.isArray(value) ? value : [value]) if (isNode(child)) children.push(child);
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, parent: next.node });
  }
}

/** A key or binding as written: `name`, `#name`, `"x-y"`, or the source of a computed key. */
function keyText(key: unknown, text: string): string | undefined {
  if (!isNode(key)) return undefined;
  if (key.type === "Identifier") return key.name as string;
  if (key.type === "PrivateName") return `#${keyText(key.id, text)}`;
  if (key.type === "StringLiteral" || key.type === "NumericLiteral") return String(key.value);
  return `[${text.slice(key.start, key.end)}]`;
}

/** How a report names a function: `Class.method`, the variable or property it is assigned to, or where it is passed. */
function functionName(node: AstNode, parents: Map<AstNode, AstNode | null>, text: string): string {
  const parent = parents.get(node) ?? null;
  const classOf = (member: AstNode) => {
    const body = parents.get(member);
    const owner = body ? parents.get(body) : undefined;
    return keyText(owner?.id, text) ?? "(class)";
  };
  if (node.type === "FunctionDeclaration" || (node.type === "FunctionExpression" && node.id)) return keyText(node.id, text) ?? "(default export)";
  if (node.type === "ClassMethod" || node.type === "ClassPrivateMethod") return `${classOf(node)}.${keyText(node.key, text)}`;
  if (node.type === "ObjectMethod") return keyText(node.key, text) ?? "(anonymous)";
  if (parent === null) return "(anonymous)";
  if (parent.type === "ClassProperty" || parent.type === "ClassPrivateProperty") return `${classOf(parent)}.${keyText(parent.key, text)}`;
  if (parent.type === "VariableDeclarator") return keyText(parent.id, text) ?? "(anonymous)";
  if (parent.type === "ObjectProperty") return keyText(parent.key, text) ?? "(anonymous)";
  if (parent.type === "AssignmentExpression") return text.slice((parent.left as AstNode).start, (parent.left as AstNode).end);
  if (parent.type === "CallExpression" || parent.type === "NewExpression") {
    const callee = parent.callee as AstNode;
    const name = text.slice(callee.start, callee.end).replace(/\s+/g, "");
    return `(function passed to ${name.length > 40 ? `${name.slice(0, 40)}…` : name})`;
  }
  if (parent.type === "ExportDefaultDeclaration") return "(default export)";
  return "(anonymous)";
}

/** The functions of a source file whose body is longer than `max` lines. */
export function longFunctions(file: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  // No body in a file this short can be longer (and parsing is most of this test's time).
  if (lineCount(text) <= max) return [];
  const ast = parse(text, {
    sourceType: "module",
    plugins: file.endsWith(".tsx") ? ["typescript", "jsx"] : ["typescript"],
    // An arrow's `(` … `)` around the expression it returns is part of its body.
    createParenthesizedExpressions: true,
  });
  const parents = new Map<AstNode, AstNode | null>();
  const found: LongFunction[] = [];
  for (const { node, parent } of walk(ast.program as unknown as AstNode)) {
    parents.set(node, parent);
    const body = node.body;
    if (!FUNCTIONS.includes(node.type) || !isNode(body)) continue;
    const lines = body.loc.end.line - body.loc.start.line + 1;
    if (lines > max) found.push({ name: functionName(node, parents, text), line: node.loc.start.line, lines });
  }
  return found;
}

describe("source size", () => {
  it("finds the source files", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.some((f) => f.file === "src/index.ts")).toBe(true);
  });

  it.each([
    ["", 0],
    ["one", 1],
    ["one\n", 1],
    ["one\ntwo", 2],
    ["one\n\nthree\n", 3],
  ])("counts the lines of %j as %i", (text, lines) => {
    expect(lineCount(text)).toBe(lines);
  });

  // Measured against a bound of 3 lines.
  it.each([
    ["a declaration within the bound", "f.ts", "function f() {\n  a();\n}", []],
    ["a declaration over it", "f.ts", "export function f(x: number) {\n  a();\n  b();\n}", [{ name: "f", line: 1, lines: 4 }]],
    ["a method, named with its class", "c.ts", "class C {\n  m(): void {\n    a();\n    b();\n  }\n}", [{ name: "C.m", line: 2, lines: 4 }]],
    ["a private method", "c.ts", "class C {\n  async #step() {\n    a();\n    b();\n  }\n}", [{ name: "C.#step", line: 2, lines: 4 }]],
    ["a constructor", "c.ts", "class C {\n  constructor() {\n    a();\n    b();\n  }\n}", [{ name: "C.constructor", line: 2, lines: 4 }]],
    ["an accessor", "c.ts", "class C {\n  get x() {\n    a();\n    return 1;\n  }\n}", [{ name: "C.x", line: 2, lines: 4 }]],
    ["an arrow in a class field", "c.ts", "class C {\n  run = () => {\n    a();\n    b();\n  };\n}", [{ name: "C.run", line: 2, lines: 4 }]],
    ["an arrow in a variable", "a.ts", "const go = async () => {\n  a();\n  b();\n};", [{ name: "go", line: 1, lines: 4 }]],
    ["an arrow returning an expression", "a.ts", "const v = () =>\n  (\n    1 +\n    2\n  );", [{ name: "v", line: 1, lines: 4 }]],
    ["a function expression in a property", "o.ts", "const o = {\n  run: function () {\n    a();\n    b();\n  },\n};", [{ name: "run", line: 2, lines: 4 }]],
    ["a method of an object", "o.ts", "const o = {\n  run() {\n    a();\n    b();\n  },\n};", [{ name: "run", line: 2, lines: 4 }]],
    ["a callback", "t.ts", "items.forEach((item) => {\n  use(item);\n  done();\n});", [{ name: "(function passed to items.forEach)", line: 1, lines: 4 }]],
    ["a JSX component", "p.tsx", "export const Page = (props: { a: string }) => (\n  <div>\n    {props.a}\n  </div>\n);", [{ name: "Page", line: 1, lines: 5 }]],
    [
      "an inner function and the one around it",
      "n.ts",
      "function outer() {\n  function inner() {\n    a();\n    b();\n  }\n}",
      [
        { name: "outer", line: 1, lines: 6 },
        { name: "inner", line: 2, lines: 4 },
      ],
    ],
    [
      "braces in strings, templates, regular expressions and comments",
      "s.ts",
      "function s() {\n  return \"}\" + `}${\"{\"}` + /}/.source; /* } */ // {\n}\nfunction t() {\n  x();\n}",
      [],
    ],
    [
      "a body those braces would seem to end early",
      "s.ts",
      "function s() {\n  const a = \"}\";\n  const b = `}`;\n  return a + b; // }\n}",
      [{ name: "s", line: 1, lines: 5 }],
    ],
    ["a component whose text holds quotes and braces", "q.tsx", "export function Q() {\n  return <p title=\"}\">Don't {\"{\"} worry</p>;\n}", []],
    ["a signature with no body", "i.ts", "interface I {\n  m(): void;\n  n(): void;\n  o(): void;\n}\ndeclare function d(): void;", []],
  ])("finds %s", (_what, file, text, expected) => {
    expect(longFunctions(file, text, 3)).toEqual(expected);
  });

  it(`keeps every file under src at ${MAX_FILE_LINES} lines or fewer`, () => {
    const long = files.filter((f) => lineCount(f.text) > MAX_FILE_LINES).map((f) => `${f.file}: ${lineCount(f.text)} lines`);
    expect(long).toEqual([]);
  });

  it(`keeps every function body under src at ${MAX_FUNCTION_LINES} lines or fewer`, () => {
    const long = files.flatMap((f) => longFunctions(f.file, f.text).map((fn) => `${f.file}:${fn.line} ${fn.name}: a body of ${fn.lines} lines`));
    expect(long).toEqual([]);
    // Parsing every source takes seconds on a busy 2-core machine.
  }, 120_000);
});
