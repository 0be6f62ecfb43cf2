/**
 * The package as npm publishes it: `npm pack` (which builds dist/ in prepack) into a folder, and an
 * install of the tarball into a scratch project without the registry (the tarball's own files, its
 * runtime dependencies linked from this repository's node_modules).
 *
 * Packing rewrites dist/ and packages/agent/node_modules in place, so two packs at once (two test
 * files, two people's runs) would ship each other's half-built files: packs take turns through a
 * lock folder, and each leaves dist/ as it found it (absent or rebuilt) before the next starts.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
export const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url));
export const REPO_MODULES = fileURLToPath(new URL("../../../../node_modules", import.meta.url));
const LOCK = path.join(os.tmpdir(), "crossbook-agent-pack.lock");

export interface Packed {
  /** The tarball's path. */
  tarball: string;
  /** The paths inside it, relative to the package root. */
  files: string[];
}

/** Packs the package into `destination`, one pack at a time on this machine. */
export async function packAgent(destination: string): Promise<Packed> {
  await acquire();
  const dist = path.join(PACKAGE_DIR, "dist");
  const hadBuild = fs.existsSync(dist);
  try {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", destination], {
      cwd: PACKAGE_DIR,
      timeout: 120_000,
    });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    return { tarball: path.join(destination, packed!.filename), files: packed!.files.map((f) => f.path) };
  } finally {
    if (!hadBuild) fs.rmSync(dist, { recursive: true, force: true });
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Takes the lock folder; one left by a process that is gone is taken over. */
async function acquire(): Promise<void> {
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      fs.writeFileSync(path.join(LOCK, "pid"), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (stale()) fs.rmSync(LOCK, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The holder is gone, or never wrote its pid and the lock is older than any pack takes. */
function stale(): boolean {
  try {
    const holder = Number(fs.readFileSync(path.join(LOCK, "pid"), "utf8"));
    return holder > 0 && !alive(holder);
  } catch {
    try {
      return Date.now() - fs.statSync(LOCK).mtimeMs > 10 * 60_000;
    } catch {
      return false; // released meanwhile: try again
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Installs a packed tarball into `project`'s node_modules as `npm install <tarball>` would, but
 * offline: the tarball's files under the package's name, and each runtime dependency it does not
 * bundle linked from this repository's node_modules (where `npm install` put the same versions).
 * Returns the package's name.
 */
export async function installTarball(project: string, tarball: string): Promise<string> {
  const unpacked = fs.mkdtempSync(path.join(os.tmpdir(), "cb-agent-unpack-"));
  try {
    await run("tar", ["-xzf", tarball, "-C", unpacked, "--strip-components=1"]);
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, "package.json"), "utf8")) as {
      name: string;
      dependencies?: Record<string, string>;
      bundleDependencies?: string[];
    };
    const target = path.join(project, "node_modules", manifest.name);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.rmSync(target, { recursive: true, force: true });
    fs.cpSync(unpacked, target, { recursive: true });
    const bundled = new Set(manifest.bundleDependencies ?? []);
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      if (!bundled.has(dep)) linkFromRepo(project, dep);
    }
    return manifest.name;
  } finally {
    fs.rmSync(unpacked, { recursive: true, force: true });
  }
}

/** Links `node_modules/<name>` (a package or a whole `@scope`) of `project` to the repository's copy. */
export function linkFromRepo(project: string, name: string): void {
  const link = path.join(project, "node_modules", name);
  if (fs.existsSync(link)) return;
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(path.join(REPO_MODULES, name), link);
}
