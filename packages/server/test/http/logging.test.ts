/** Request logs still carry the request id with the lazily created child logger, and no secrets. */
import { Writable } from "node:stream";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { lazyChildLoggerFactory } from "../../src/http/lazy-logger";

describe("lazy request logger", () => {
  it("binds the request id when a request logs, and skips disabled levels", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = Fastify({
      logger: { level: "info", stream },
      childLoggerFactory: lazyChildLoggerFactory,
      genReqId: () => "req_test",
      disableRequestLogging: true,
    });
    app.get("/", async (request) => {
      request.log.debug("hidden");
      request.log.info({ n: 1 }, "hello");
      return "ok";
    });
    await app.inject({ method: "GET", url: "/" });
    await app.close();
    const logged = lines.map((l) => JSON.parse(l));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ reqId: "req_test", n: 1, msg: "hello", level: 30 });
  });
});
