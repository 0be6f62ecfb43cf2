/**
 * `npm install <spec>…` without the registry, for the quick-start test: run in a project folder in
 * place of npm's own install (the test puts an `npm` in front of the real one that sends `install`
 * here). A tarball spec installs the freshly packed package (QUICKSTART_TARBALL; the spec must name
 * the same file); a package name links this repository's installed copy and its bins. Either way the
 * project's package.json gets the dependency, as npm would write it. Anything else is refused, so a
 * README that installs more than the test provides fails loudly instead of half working.
 */
import fs from "node:fs";
import path from "node:path";
import { installTarball, linkFromRepo, REPO_MODULES } from "./pack";

const project = process.cwd();
const tarball = process.env.QUICKSTART_TARBALL;
if (!tarball) throw new Error("QUICKSTART_TARBALL is not set");
const manifestFile = path.join(project, "package.json");
const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8")) as {
  dependencies?: Record<string, string>;
};
const dependencies = { ...manifest.dependencies };

for (const spec of process.argv.slice(2)) {
  if (spec.startsWith("-")) throw new Error(`offline install: unexpected option ${spec}`);
  if (spec.endsWith(".tgz")) {
    if (path.basename(spec) !== path.basename(tarball))
      throw new Error(`offline install: ${spec} is not what npm pack made (${path.basename(tarball)})`);
    const name = await installTarball(project, tarball);
    dependencies[name] = `file:${spec}`;
  } else if (/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/.test(spec)) {
    const installed = path.join(REPO_MODULES, spec, "package.json");
    if (!fs.existsSync(installed))
      throw new Error(`offline install: ${spec} is not in the repository's node_modules`);
    const { version, bin } = JSON.parse(fs.readFileSync(installed, "utf8")) as {
      version: string;
      bin?: string | Record<string, string>;
    };
    linkFromRepo(project, spec);
    const bins = typeof bin === "string" ? { [spec.split("/").pop()!]: bin } : (bin ?? {});
    for (const [command, file] of Object.entries(bins)) {
      const link = path.join(project, "node_modules", ".bin", command);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.rmSync(link, { force: true });
      fs.symlinkSync(path.join("..", spec, file), link);
    }
    dependencies[spec] = `^${version}`;
  } else {
    throw new Error(`offline install: cannot install ${spec} without the registry`);
  }
}
fs.writeFileSync(manifestFile, `${JSON.stringify({ ...manifest, dependencies }, null, 2)}\n`);
