/**
 * The console's webhooks in a real browser (Debian's Chromium through playwright-core): a new user
 * signs up, registers a webhook to a local HTTPS receiver (a certificate made for 127.0.0.1 by a CA
 * created here, trusted by the sender of this app only), sees the generated secret once, sends a
 * test event and finds it in the delivery log with its status and response code, signed with that
 * secret.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { generate } from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendWebhook } from "../../src/webhooks/sender";
import { verifySpecSignature } from "../../src/webhooks/signing";
import { createTestApp, type TestApp } from "../support/app";
import { HAVE_CHROMIUM, screenshot, startBrowser } from "./support";

type Pem = { key: string; cert: string };

/** A CA, and a server certificate for 127.0.0.1 that it issued. */
async function certificates(): Promise<{ ca: Pem; leaf: Pem }> {
  const ca = await generate([{ name: "commonName", value: "crossbook console webhooks test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const caPem = { key: ca.private, cert: ca.cert };
  const leaf = await generate([{ name: "commonName", value: "127.0.0.1" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: caPem,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
    ],
  });
  return { ca: caPem, leaf: { key: leaf.private, cert: leaf.cert } };
}

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe.skipIf(!HAVE_CHROMIUM)("console webhooks in headless Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiver: Server;
  let receiverUrl: string;
  const received: Received[] = [];

  beforeAll(async () => {
    const { ca, leaf } = await certificates();
    receiver = createServer({ key: leaf.key, cert: leaf.cert }, (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
        response.writeHead(202, { "content-type": "application/json" }).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/crossbook`;
    t = await createTestApp({
      // The receiver is on loopback, which only a self-hosted setup may allow.
      config: { webhookAllowPrivateNetworks: true },
      webhooks: {
        // The real HTTPS sender, trusting the test CA (production uses the system store).
        send: (input) => sendWebhook({ ...input, allowPrivate: true, ca: ca.cert }),
      },
    });
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await startBrowser();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it("registers a webhook, sends a test and sees the delivery with its status", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const noHorizontalScroll = () =>
      page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth");

    await page.goto(`${base}/console/signup`);
    await page.fill("#f-email", "browser-webhooks@example.com");
    await page.fill("#f-password", "correct horse battery staple");
    await page.click("button[type=submit]:has-text('Create account')");
    await page.waitForURL(/\/console\/keys/);

    await page.click("nav >> text=Webhooks");
    await page.waitForURL(`${base}/console/webhooks`);
    expect(await page.textContent("[data-testid=no-webhooks]")).toContain("No webhooks");

    // A plain-HTTP URL is refused next to the field.
    await page.fill("#f-url", receiverUrl.replace("https:", "http:"));
    await page.check("input[name=events][value='deposit.completed']");
    await page.click("button[type=submit]:has-text('Register webhook')");
    expect(await page.textContent("#f-url-error")).toMatch(/https/i);

    await page.fill("#f-url", receiverUrl);
    await page.check("input[name=events][value='order.filled']");
    await page.click("button[type=submit]:has-text('Register webhook')");
    await page.waitForSelector("[data-testid=webhook-secret]");
    const secret = (await page.textContent("[data-testid=webhook-secret]"))!.trim();
    expect(secret).toMatch(/^whsec_/);
    expect(await page.textContent("main")).toContain("you will not see this again");
    expect(await page.isVisible("button[data-copy=webhook-secret]")).toBe(true); // the script showed it

    await page.click("nav >> text=Webhooks");
    await page.waitForURL(`${base}/console/webhooks`);
    expect(await page.locator("[data-testid=webhook]").count()).toBe(1);
    expect(await page.textContent("[data-testid=webhook]")).toContain("order.filled, deposit.completed");
    expect(await page.content()).not.toContain(secret);
    expect(await noHorizontalScroll()).toBe(true);
    await screenshot(page, "webhooks");

    await page.click(`[data-testid=webhook] a:has-text('${receiverUrl}')`);
    await page.waitForURL(/\/console\/webhooks\/wh_/);
    await page.click("button:has-text('Send a test event')");
    await page.waitForSelector(".flash.ok");
    expect(await page.textContent(".flash.ok")).toContain("Test event delivered: HTTP 202");

    const row = page.locator("[data-testid=delivery]");
    expect(await row.count()).toBe(1);
    expect(await row.locator("[data-testid=delivery-status]").textContent()).toBe("Test delivered");
    expect(await row.locator("[data-testid=delivery-code]").textContent()).toBe("202");
    expect(await row.textContent()).toContain("webhook.test");

    // The receiver got it over HTTPS, signed with the secret shown once.
    expect(received).toHaveLength(1);
    const [delivery] = received;
    const header = (name: string) => String(delivery!.headers[name]);
    expect(
      verifySpecSignature(
        secret,
        header("x-service-timestamp"),
        delivery!.body,
        header("x-service-signature"),
        {
          nowSeconds: Math.floor(t.clock.now() / 1000),
        },
      ),
    ).toBe(true);

    // The attempt's headers and payload, in collapsed sections.
    await page.click("tr.attempts summary");
    await page.click("[data-testid=attempt] summary:has-text('Request headers')");
    await page.click("[data-testid=attempt] summary:has-text('Payload')");
    expect(await page.textContent("[data-testid=attempt-headers]")).toContain(
      `x-service-signature: ${header("x-service-signature")}`,
    );
    expect(await page.textContent("[data-testid=attempt-payload]")).toContain('"type": "webhook.test"');
    expect(await page.content()).not.toContain(secret);
    expect(await noHorizontalScroll()).toBe(true);
    await screenshot(page, "webhook-deliveries");

    // Phone width: the tables stack, nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await noHorizontalScroll()).toBe(true);
    await context.close();
  }, 60_000);
});
