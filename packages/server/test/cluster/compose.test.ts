/**
 * docker-compose.yml is documentation no CI machine can run (no container engine): what keeps it
 * honest is that every crossbook setting it makes is one the three-instance test starts the
 * processes with, and that each is a setting crossbook reads.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "../../../..");
const compose = readFileSync(path.join(root, "docker-compose.yml"), "utf8");
const instancesTest = readFileSync(path.join(__dirname, "instances.test.ts"), "utf8");
const config = readFileSync(path.join(root, "packages/server/src/config.ts"), "utf8");

/** The keys of every `environment:` block of the crossbook services (not the images' own). */
function crossbookSettings(): string[] {
  const keys = new Set<string>();
  let inEnvironment = false;
  let indent = 0;
  let section = "";
  let service = "";
  for (const line of compose.split("\n")) {
    const top = /^([a-z][a-z0-9-]*):/.exec(line);
    if (top) section = service = top[1]!;
    else if (section === "services" && /^ {2}[a-z0-9-]+:\s*$/.test(line)) service = line.trim().slice(0, -1);
    const opened = /^(\s*)environment:/.exec(line);
    if (opened) {
      inEnvironment = service.startsWith("crossbook") || service === "x-crossbook";
      indent = opened[1]!.length;
      continue;
    }
    if (!inEnvironment || line.trim() === "" || line.trim().startsWith("#")) continue;
    const entry = /^(\s*)([A-Z][A-Z0-9_]*):/.exec(line);
    if (entry && entry[1]!.length > indent) keys.add(entry[2]!);
    else if (!line.trim().startsWith("<<")) inEnvironment = false;
  }
  return [...keys].sort();
}

describe("docker-compose.yml", () => {
  it("uses only settings the three-instance test runs with, each one crossbook reads", () => {
    const settings = crossbookSettings();
    expect(settings).toEqual(
      expect.arrayContaining(["DATABASE_URL", "REDIS_URL", "INSTANCE_ID", "TRUST_PROXY"]),
    );
    for (const key of settings) {
      expect(instancesTest, `${key} is not set by instances.test.ts`).toMatch(new RegExp(`\\b${key}[:,]`));
      expect(config, `${key} is not read by config.ts`).toContain(`"${key}"`);
    }
  });
});
