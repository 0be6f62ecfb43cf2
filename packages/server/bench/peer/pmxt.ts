/**
 * pmxt for bench/peer: installed at run time into a temporary folder (never a dependency of ours,
 * nothing of it committed), and its sidecar (`pmxt-server`, the HTTP + WebSocket server pmxtjs and
 * pmxt's other SDKs talk to) started against the fake venues.
 *
 * Where pmxt has a setting for a venue URL it is used (its environment variables KALSHI_BASE_URL,
 * POLYMARKET_GAMMA_URL, POLYMARKET_GAMMA_MARKETS_URL, POLYMARKET_GAMMA_SEARCH_URL,
 * POLYMARKET_CLOB_URL, POLYMARKET_DATA_URL). Where it hard-codes one (the OpenAPI `servers` of its
 * Polymarket CLOB/Gamma/Data clients, the Kalshi WebSocket, the Polymarket market WebSocket of
 * @nevuamarkets/poly-websockets), a preload (`node --require`) rewrites the URL at load time: every
 * axios instance gets a request interceptor, and `require("ws")` returns a WebSocket whose
 * constructor rewrites its address. The preload logs each hard-coded base it redirects (the bench
 * prints those lines), and refuses any connection to a host outside loopback, so nothing reaches a
 * real venue whatever pmxt does.
 *
 * Throttle: pmxt queues each exchange's venue calls through a token bucket (`enableRateLimit`, on by
 * default: Kalshi one call per 100 ms, Polymarket one per 200 ms). The sidecar has no setting for
 * it, so for the "throttle off" sidecar the preload wraps the sidecar's exchange factory and sets
 * `enableRateLimit = false` on every exchange it creates (pmxt's own switch, as in ccxt). The
 * "as shipped" sidecar leaves it alone.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

/** The pmxt release measured: the latest on npm that runs on Node 20 (checked 2026-11-28). */
export const PMXT_VERSION = "2.41.0";
/**
 * pmxt-core's optional peer dependency for Polymarket's watchOrderBook (without it the sidecar
 * answers "requires the @nevuamarkets/poly-websockets package").
 */
export const POLY_WEBSOCKETS_VERSION = "1.0.2";

const execFileAsync = promisify(execFile);

/** `npm install --prefix <dir>` of the pinned packages; resolves with pmxt-core's folder. */
export async function installPmxt(dir: string): Promise<string> {
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "bench-peer-pmxt", private: true }),
  );
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  await execFileAsync(
    npm,
    [
      "install",
      "--prefix",
      dir,
      `pmxt-core@${PMXT_VERSION}`,
      `@nevuamarkets/poly-websockets@${POLY_WEBSOCKETS_VERSION}`,
      "--no-audit",
      "--no-fund",
      "--no-save",
      "--loglevel=error",
    ],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  const root = path.join(dir, "node_modules", "pmxt-core");
  const installed = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    version: string;
  };
  if (installed.version !== PMXT_VERSION)
    throw new Error(`bench/peer: npm installed pmxt-core ${installed.version}, not ${PMXT_VERSION}`);
  return root;
}

/**
 * The preload (CommonJS, written next to the install): URL redirection for pmxt's hard-coded venue
 * URLs, a loopback-only guard on every socket, and (PMXT_BENCH_THROTTLE=off) enableRateLimit off.
 */
const PRELOAD = String.raw`"use strict";
const Module = require("node:module");
const net = require("node:net");
const path = require("node:path");

const map = Object.entries(JSON.parse(process.env.PMXT_BENCH_REDIRECT || "{}"));
const reported = new Set();
function rewrite(address) {
  const text = typeof address === "string" ? address : address instanceof URL ? address.href : null;
  if (text === null) return address;
  for (const [from, to] of map) {
    if (text === from || text.startsWith(from + "/") || text.startsWith(from + "?")) {
      if (!reported.has(from)) {
        reported.add(from);
        process.stderr.write("pmxt-redirect: " + from + " -> " + to + "\n");
      }
      return to + text.slice(from.length);
    }
  }
  return address;
}

// Nothing leaves loopback, whatever pmxt or its dependencies try.
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
const blocked = new Set();
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  let options = args[0];
  if (Array.isArray(options)) options = options[0];
  let host;
  if (options !== null && typeof options === "object") host = options.path ? "localhost" : options.host || options.hostname;
  else if (typeof args[1] === "string") host = args[1];
  host = host || "localhost";
  if (!LOOPBACK.test(host)) {
    if (!blocked.has(host)) {
      blocked.add(host);
      process.stderr.write("pmxt-redirect: blocked a connection to " + host + " (not loopback)\n");
    }
    process.nextTick(() => this.destroy(new Error("bench/peer: connection to " + host + " refused (loopback only)")));
    return this;
  }
  return connect.apply(this, args);
};

const patchedAxios = new WeakSet();
function patchAxios(axios) {
  if (!axios || typeof axios.create !== "function" || patchedAxios.has(axios)) return;
  patchedAxios.add(axios);
  const intercept = (instance) => {
    instance.interceptors.request.use((config) => {
      if (config.baseURL) config.baseURL = rewrite(config.baseURL);
      if (config.url) config.url = rewrite(config.url);
      return config;
    });
    return instance;
  };
  intercept(axios);
  const create = axios.create;
  axios.create = function (...args) {
    return intercept(create.apply(this, args));
  };
}

const wrappedWs = new WeakMap();
function wrapWs(WebSocket) {
  if (typeof WebSocket !== "function") return WebSocket;
  let wrapped = wrappedWs.get(WebSocket);
  if (!wrapped) {
    wrapped = class extends WebSocket {
      constructor(address, ...rest) {
        super(rewrite(address), ...rest);
      }
    };
    wrappedWs.set(WebSocket, wrapped);
  }
  return wrapped;
}

const throttleOff = process.env.PMXT_BENCH_THROTTLE === "off";
const patchedFactories = new WeakSet();
function patchFactory(factory) {
  if (!factory || typeof factory.createExchange !== "function" || patchedFactories.has(factory)) return;
  patchedFactories.add(factory);
  const create = factory.createExchange;
  factory.createExchange = function (...args) {
    const exchange = create.apply(this, args);
    exchange.enableRateLimit = false;
    return exchange;
  };
}

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exported = load.apply(this, arguments);
  if (request === "axios") patchAxios(exported);
  else if (request === "ws") return wrapWs(exported);
  else if (throttleOff && request === "./exchange-factory" && parent && parent.filename &&
    parent.filename.includes(path.join("pmxt-core", "dist", "server"))) patchFactory(exported);
  return exported;
};
`;

export interface SidecarOptions {
  /** pmxt-core's installed folder. */
  root: string;
  /** A folder of this sidecar's own: its HOME (pmxt writes ~/.pmxt/server.lock) and working folder. */
  home: string;
  /** Hard-coded base -> fake base, for the preload. */
  redirect: Record<string, string>;
  /** pmxt's own settings (venue URLs, Kalshi key) for its environment. */
  env: Record<string, string>;
  throttle: "off" | "shipped";
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
}

export interface Sidecar {
  process: ChildProcess;
  url: string;
  wsUrl: string;
  token: string;
  /** The preload's redirect and block lines, as logged. */
  redirects: () => string[];
  /** The last of what it wrote (for an error report). */
  output: () => string;
}

/** Starts `pmxt-server` (pmxt-core's dist/server/index.js) with the preload; resolves once it listens. */
export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  fs.mkdirSync(options.home, { recursive: true });
  const preload = path.join(path.dirname(options.home), "pmxt-bench-preload.cjs");
  if (!fs.existsSync(preload)) fs.writeFileSync(preload, PRELOAD);
  const token = randomUUID();
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeFlags ?? []),
      "--require",
      preload,
      path.join(options.root, "dist", "server", "index.js"),
    ],
    {
      cwd: options.home,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: options.home,
        PMXT_ACCESS_TOKEN: token,
        PMXT_BENCH_REDIRECT: JSON.stringify(options.redirect),
        PMXT_BENCH_THROTTLE: options.throttle,
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const redirects: string[] = [];
  /** Each stream's unfinished last line. */
  const pending = { stdout: "", stderr: "" };
  const keep = (stream: "stdout" | "stderr", chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    const lines = (pending[stream] + text).split("\n");
    pending[stream] = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("pmxt-redirect: ")) redirects.push(line.slice(15));
  };
  child.stderr!.on("data", (chunk: Buffer) => keep("stderr", chunk));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`pmxt sidecar did not start in 30 s:\n${output}`)),
      30_000,
    );
    child.stdout!.on("data", (chunk: Buffer) => {
      keep("stdout", chunk);
      out += chunk.toString();
      const match = /running on http:\/\/localhost:(\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`pmxt sidecar exited with ${code}:\n${output}`));
    });
  });
  return {
    process: child,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws?token=${token}`,
    token,
    redirects: () => [...redirects],
    output: () => output,
  };
}
