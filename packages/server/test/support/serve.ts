/**
 * Starts `crossbook serve` as a real child process and waits for the address it logs. For the
 * suites that need a process of their own: the CLI, and kill -9 crash tests.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const BIN = path.resolve(__dirname, "../../bin/crossbook.mjs");

export interface Served {
  server: ChildProcess;
  url: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
}

export async function startServe(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Served> {
  const server = spawn(process.execPath, [BIN, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  server.stdout!.on("data", (chunk) => {
    output += chunk;
  });
  server.stderr!.on("data", (chunk) => {
    output += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(check);
      server.kill("SIGKILL"); // never leave a half-started server behind
      reject(new Error(`server did not start:\n${output}`));
    }, timeoutMs);
    const check = setInterval(() => {
      const match = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearInterval(check);
        clearTimeout(timer);
        resolve(match[1]!);
      }
    }, 25);
  });
  return { server, url, output: () => output };
}
