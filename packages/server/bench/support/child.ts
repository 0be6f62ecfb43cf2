/**
 * The node arguments that load a bench's own file in a child process: TypeScript needs tsx; a bench
 * built by scripts/bench.mjs (how `npm run bench:*` runs them) is JavaScript and needs nothing.
 */
export function loaderArgs(script: string): string[] {
  return script.endsWith(".ts") ? ["--import", "tsx"] : [];
}

/** The bench's numeric argument `--name <value>`, or `fallback` (a forked child gets the same arguments). */
export function arg(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}
