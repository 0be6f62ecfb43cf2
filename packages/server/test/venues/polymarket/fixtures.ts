/** Loads Polymarket fixtures (payloads we wrote from VENUES.md §1) and collects reports. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../../fixtures/polymarket/", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary venue JSON
export function fixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(`${dir}${name}`, "utf8")) as T;
}

export function fixtureText(name: string): string {
  return readFileSync(`${dir}${name}`, "utf8");
}

export function reports() {
  const seen: Array<{ kind: string; detail: string }> = [];
  return {
    seen,
    report: (kind: string, detail: string) => {
      seen.push({ kind, detail });
    },
    kinds: () => [...new Set(seen.map((s) => s.kind))].sort(),
  };
}

export const C1 = "0x1fad72fae204143ff1c3035e99e7c0f65ea8d5cd9bd1070987bd1a3316f772be";
export const T1Y = "98022490269692409998126496127597032490334070080325855126491859374983463996227";
export const T1N = "53830000000000000000000000000000000000000000000000000000000000000000000000001";
export const C2 = `0x${"b2".repeat(32)}`;
export const T2Y = "22222222222222222222222222222222222222222222222222222222222222222222222222201";
export const T2N = "22222222222222222222222222222222222222222222222222222222222222222222222222202";
