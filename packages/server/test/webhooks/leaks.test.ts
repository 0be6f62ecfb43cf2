/**
 * Part 5 of issue 18: the SSRF guard's refusals never tell a user which address a host name
 * resolved to (at registration, on PATCH, or in a delivery record), so it cannot be used to map
 * the internal network. A URL whose host is an IP literal may name it: the user wrote it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bearer } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { orderCancelled, record, register, webhooksApp } from "./setup";

describe.each(STORE_BACKENDS)("SSRF refusals on %s", (store) => {
  /** What names resolve to; a test repoints one (DNS rebinding). */
  let dns: Record<string, string>;
  let s: Awaited<ReturnType<typeof webhooksApp>>;
  beforeEach(async () => {
    dns = { "hooks.example.com": "93.184.216.34", "internal.example.com": "10.20.30.40" };
    s = await webhooksApp({
      store,
      webhooks: {
        lookup: async (hostname) => {
          const address = dns[hostname];
          if (!address) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
          return [{ address, family: 4 as const }];
        },
        // The real sender: the guard runs again at each attempt.
        send: undefined,
      },
    });
  });
  afterEach(async () => {
    await s.t.close();
  });

  const call = (method: "POST" | "PATCH", url: string, payload: object) =>
    s.t.app.inject({ method, url, headers: bearer(s.key), payload });

  it("a registration or PATCH to a name with a private address says so without the address", async () => {
    const created = await call("POST", "/v1/webhooks", {
      url: "https://internal.example.com/in",
      events: ["order.cancelled"],
    });
    expect(created.statusCode).toBe(400);
    expect(created.json().error.details.fields["body.url"]).toBe(
      "internal.example.com resolves to a private or reserved address; webhooks may only reach public addresses (a self-hosted server can allow others with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)",
    );
    expect(created.body).not.toContain("10.20.30.40");
    expect(created.body).not.toMatch(/10\.0\.0\.0|private network/);

    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled"],
    });
    const patched = await call("PATCH", `/v1/webhooks/${hook.id}`, { url: "https://internal.example.com/x" });
    expect(patched.statusCode).toBe(400);
    expect(patched.body).toContain("resolves to a private or reserved address");
    expect(patched.body).not.toContain("10.20.30.40");
  });

  it("an IP-literal URL is refused naming the address the user wrote", async () => {
    const created = await call("POST", "/v1/webhooks", {
      url: "https://10.20.30.40/in",
      events: ["order.cancelled"],
    });
    expect(created.statusCode).toBe(400);
    expect(created.json().error.details.fields["body.url"]).toMatch(
      /^10\.20\.30\.40 is not a public address/,
    );
  });

  it("a delivery to a name rebound to a private address is recorded without the address", async () => {
    const hook = await register(s.t.app, s.key, {
      url: "https://hooks.example.com/in",
      events: ["order.cancelled"],
    });
    dns["hooks.example.com"] = "169.254.169.254";
    await record(s.t, "order.cancelled", orderCancelled("ord_1"), s.accountId);
    await s.t.services.webhookDispatcher.runOnce();
    const records = (
      await s.t.app.inject({
        method: "GET",
        url: `/v1/webhooks/${hook.id}/deliveries`,
        headers: bearer(s.key),
      })
    ).json().data;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      status: "failed",
      response_code: null,
      error:
        "refused by SSRF guard: hooks.example.com resolves to a private or reserved address; webhooks may only reach public addresses (a self-hosted server can allow others with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)",
    });
    expect(JSON.stringify(records)).not.toMatch(/169\.254|metadata/);
  });
});
