import Fastify from "fastify";
import fastifySymbols from "fastify/lib/symbols.js";
import { describe, expect, it } from "vitest";
import { type RouteConfig, routeConfig } from "../../src/http/route-context";

describe("routeConfig", () => {
  it("is the route's own config object, read from Fastify's route context (not the routeOptions getter)", async () => {
    // If a Fastify release moves the context, routeConfig still works through the getter, but the
    // hot path loses its shortcut: this says so.
    expect(typeof fastifySymbols["kRouteContext"]).toBe("symbol");
    const app = Fastify();
    const seen: Array<{ config: RouteConfig; viaGetter: unknown; again: RouteConfig }> = [];
    app.get("/things/:id", { config: { auth: "none" } }, async (request) => {
      seen.push({
        config: routeConfig(request),
        viaGetter: request.routeOptions.config,
        again: routeConfig(request),
      });
      return {};
    });
    app.setNotFoundHandler(async (request, reply) => {
      seen.push({
        config: routeConfig(request),
        viaGetter: request.routeOptions.config,
        again: routeConfig(request),
      });
      return reply.code(404).send({});
    });
    await app.inject({ method: "GET", url: "/things/1" });
    await app.inject({ method: "GET", url: "/things/2" });
    await app.inject({ method: "GET", url: "/nowhere" });
    const [first, second, missing] = seen;
    expect(first!.config).toBe(first!.viaGetter);
    expect(first!.config).toMatchObject({ auth: "none", url: "/things/:id", method: "GET" });
    // One object per route for the app's life: metrics key their series by it.
    expect(second!.config).toBe(first!.config);
    expect(missing!.config).toBe(missing!.viaGetter);
    expect(missing!.config.url).toBeUndefined();
    await app.close();
  });
});
