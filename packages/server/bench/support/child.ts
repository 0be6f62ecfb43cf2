/**
 * The node arguments that load a bench's own file in a child process: TypeScript needs tsx; a bench
 * built by scripts/bench.mjs (how `npm run bench:*` runs them) is JavaScript and needs nothing.
 */
export function loaderArgs(script: string): string[] {
  return script.endsWith(".ts") ? ["--import", "tsx"] : [];
}
