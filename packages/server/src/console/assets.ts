/**
 * The console's static assets, written in this folder and served by the service itself under a
 * content-hashed name (`/console/assets/console.<hash>.css`), so a browser may keep each for a year
 * (`immutable`) and a new release is fetched at once. Nothing is loaded from anywhere else.
 */
import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { SCRIPT } from "./assets/script";
import { STYLE } from "./assets/style";

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Where assets are served; they are the same for everyone, so no session is looked up for them. */
export const ASSETS_PATH = "/console/assets/";

const byName = new Map<string, Asset>();
const urls: Record<string, string> = {};

function add(name: string, ext: string, type: string, text: string): void {
  const body = Buffer.from(text);
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 12);
  const file = `${name}.${hash}.${ext}`;
  byName.set(file, { body, type, etag: `"${hash}"` });
  urls[`${name}.${ext}`] = `${ASSETS_PATH}${file}`;
}

add("console", "css", "text/css; charset=utf-8", STYLE);
add("console", "js", "text/javascript; charset=utf-8", SCRIPT);

/** The URL an asset is served at, by its plain name (`console.css`). */
export function assetUrl(name: string): string {
  const url = urls[name];
  if (!url) throw new Error(`no console asset ${name}`);
  return url;
}

export function registerAssets(app: FastifyInstance): void {
  app.get<{ Params: { file: string } }>("/assets/:file", async (request, reply) => {
    const asset = byName.get(request.params.file);
    if (!asset) return reply.code(404).type("text/plain; charset=utf-8").send("Not found");
    reply
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("etag", asset.etag)
      .type(asset.type);
    if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
}
