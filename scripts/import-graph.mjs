#!/usr/bin/env node
/**
 * The import graph between the domain folders of packages/server/src.
 *
 * A domain folder is the first directory under src/ (orders, prices, infra…); files directly in
 * src/ (app.ts, main.ts…) are the composition root, "(root)". Only value imports count: an
 * `import type` (or an import whose every name is `type`) creates no runtime edge, so it cannot
 * create a load-order cycle. The architecture test (test/architecture.test.ts) uses
 * `domainGraph()` and `cyclesOf()` to hold the rule "no two domain folders import each other,
 * directly or through others".
 *
 *   node scripts/import-graph.mjs            the edges, and any cycle, as text
 *   node scripts/import-graph.mjs --mermaid  a Mermaid flowchart
 *   node scripts/import-graph.mjs --docs     rewrite that flowchart in docs/ARCHITECTURE.md
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ts = createRequire(import.meta.url)("typescript");
export const serverSrc = path.join(repo, "packages", "server", "src");
export const ROOT = "(root)";
export const architectureDoc = path.join(repo, "docs", "ARCHITECTURE.md");
/** The Mermaid block of docs/ARCHITECTURE.md: the only fenced mermaid block on the page. */
export const MERMAID_BLOCK = /```mermaid\n[\s\S]*?\n```/;

function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

function domainOf(file) {
  const relative = path.relative(serverSrc, file);
  const parts = relative.split(path.sep);
  return parts.length === 1 ? ROOT : parts[0];
}

/** The relative specifiers a file imports for their values (type-only imports left out). */
export function valueImports(file) {
  const text = fs.readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const specifiers = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          clause.namedBindings &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((element) => element.isTypeOnly));
      if (!typeOnly) specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((specifier) => specifier.startsWith("."));
}

/** Domain → the set of other domains it imports values from, with one file pair per edge. */
export function domainGraph() {
  const edges = new Map();
  for (const file of sourceFiles(serverSrc)) {
    const from = domainOf(file);
    for (const specifier of valueImports(file)) {
      const target = path.resolve(path.dirname(file), specifier);
      if (!target.startsWith(serverSrc)) continue;
      const to = domainOf(`${target}.ts`);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const targets = edges.get(from);
      if (!targets.has(to)) {
        targets.set(to, `${path.relative(serverSrc, file)} -> ${specifier}`);
      }
    }
  }
  return edges;
}

/** Strongly connected components with more than one folder: each is an import cycle. */
export function cyclesOf(edges) {
  const nodes = new Set(edges.keys());
  for (const targets of edges.values()) for (const to of targets.keys()) nodes.add(to);
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const connect = (node) => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!indexOf.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), indexOf.get(next)));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!indexOf.has(node)) connect(node);
  return cycles;
}

/**
 * The graph as a Mermaid flowchart, the form docs/ARCHITECTURE.md embeds. The composition root's
 * edges (it imports every folder) and edges into infra/ (every folder may use it) are left out:
 * they would hide the ones worth reading.
 */
export function mermaid(edges) {
  const lines = ["flowchart TD"];
  for (const from of [...edges.keys()].sort()) {
    if (from === ROOT) continue;
    for (const to of [...edges.get(from).keys()].sort()) {
      if (to !== "infra") lines.push(`  ${from} --> ${to}`);
    }
  }
  return lines.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const edges = domainGraph();
  if (process.argv.includes("--docs")) {
    const doc = fs.readFileSync(architectureDoc, "utf8");
    fs.writeFileSync(architectureDoc, doc.replace(MERMAID_BLOCK, `\`\`\`mermaid\n${mermaid(edges)}\n\`\`\``));
  } else if (process.argv.includes("--mermaid")) {
    console.log(mermaid(edges));
  } else {
    for (const from of [...edges.keys()].sort()) {
      for (const [to, example] of [...edges.get(from)].sort()) {
        console.log(`${from} -> ${to}    (${example})`);
      }
    }
    const cycles = cyclesOf(edges);
    console.log(
      cycles.length === 0
        ? "\nno cycles"
        : `\ncycles:\n${cycles.map((c) => `  ${c.join(" <-> ")}`).join("\n")}`,
    );
  }
}
