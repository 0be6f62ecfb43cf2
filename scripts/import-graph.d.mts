/** The domain-folder import graph of packages/server/src (see import-graph.mjs). */
export const serverSrc: string;
export const ROOT: string;
export function valueImports(file: string): string[];
export function domainGraph(): Map<string, Map<string, string>>;
export function cyclesOf(edges: Map<string, Map<string, string>>): string[][];
export const architectureDoc: string;
export const MERMAID_BLOCK: RegExp;
export function mermaid(edges: Map<string, Map<string, string>>): string;
