/**
 * The rules of docs/ARCHITECTURE.md that code can check: no two domain folders of
 * packages/server/src import each other's values, directly or through others; runtime code does not
 * import a migration; SQL stays in repos (checked for the folders already moved there).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  architectureDoc,
  cyclesOf,
  domainGraph,
  MERMAID_BLOCK,
  mermaid,
  serverSrc,
  valueImports,
} from "../../../scripts/import-graph.mjs";

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

describe("architecture", () => {
  it("finds a cycle when there is one (the check below can fail)", () => {
    const edges = new Map([
      ["a", new Map([["b", "a.ts -> ../b/x"]])],
      ["b", new Map([["c", "b.ts -> ../c/x"]])],
      ["c", new Map([["a", "c.ts -> ../a/x"]])],
      ["d", new Map([["a", "d.ts -> ../a/x"]])],
    ]);
    expect(cyclesOf(edges)).toEqual([["a", "b", "c"]]);
  });

  it("has no import cycle between domain folders (value imports)", () => {
    const edges = domainGraph();
    const cycles = cyclesOf(edges).map((cycle) =>
      cycle
        .flatMap((from) =>
          cycle
            .filter((to) => edges.get(from)?.has(to))
            .map((to) => `${from} -> ${to}: ${edges.get(from)!.get(to)}`),
        )
        .join("\n"),
    );
    expect(cycles).toEqual([]);
  });

  it("ignores type-only imports, which create no load-time edge", () => {
    const file = path.join(serverSrc, "orders", "repo.ts");
    expect(fs.existsSync(file)).toBe(true);
    // orders/repo.ts imports the Owner type from access/; a type import is not a value edge.
    expect(valueImports(file)).not.toContain("../access/owner");
  });

  it("runtime code imports no migration", () => {
    const offenders = filesUnder(serverSrc)
      .filter((file) => !file.includes(`${path.sep}migrations${path.sep}`))
      .filter((file) => valueImports(file).some((specifier) => specifier.includes("/migrations/0")))
      .map((file) => path.relative(serverSrc, file));
    expect(offenders).toEqual([]);
  });

  it("docs/ARCHITECTURE.md draws the import graph as it is (npm run graph -- --docs redraws it)", () => {
    const block = MERMAID_BLOCK.exec(fs.readFileSync(architectureDoc, "utf8"))?.[0];
    expect(block).toBe(`\`\`\`mermaid\n${mermaid(domainGraph())}\n\`\`\``);
  });
});
