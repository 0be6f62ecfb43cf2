import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { type RouteConfig, routeConfig } from "../../src/http/route-context";

describe("routeConfig", () => {
  it("is the route's own config object, the same one for every request to that route", async () => {
    const app = Fastify();
    const seen: RouteConfig[] = [];
    app.get("/things/:id", { config: { auth: "none" } }, async (request) => {
      seen.push(routeConfig(request));
      return {};
    });
    app.setNotFoundHandler(async (request, reply) => {
      seen.push(routeConfig(request));
      return reply.code(404).send({});
    });
    await app.inject({ method: "GET", url: "/things/1" });
    await app.inject({ method: "GET", url: "/things/2" });
    await app.inject({ method: "GET", url: "/nowhere" });
    const [first, second, missing] = seen;
    expect(first).toMatchObject({ auth: "none", url: "/things/:id", method: "GET" });
    // One object per route for the app's life: metrics key their series by it.
    expect(second).toBe(first);
    expect(missing!.url).toBeUndefined();
    await app.close();
  });
});
