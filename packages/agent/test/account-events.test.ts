/**
 * `client.accountEvents()` against the demo: the account's events oldest first, across pages; a
 * cursor file that lets a restarted agent read on from the last event it handled (none missed, none
 * twice); following new events as they come; and a torn or foreign cursor file refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AccountEvent, Crossbook, FileCursorStore, MemoryCursorStore } from "../src/index";
import { type Demo, startDemo } from "./support/demo";

describe("account events from the agent library", () => {
  let demo: Demo;
  let client: Crossbook;
  let dir: string;

  beforeAll(async () => {
    demo = await startDemo({ tickMs: 1000 });
    client = new Crossbook({ apiKey: demo.sandboxKey, environment: "sandbox", baseUrl: demo.url });
    dir = mkdtempSync(path.join(os.tmpdir(), "cb-cursor-"));
    for (let i = 1; i <= 5; i++) await client.sandbox.deposit(i);
  }, 120_000);

  afterAll(async () => {
    await demo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const amounts = (events: AccountEvent[]) =>
    events.filter((e) => e.type === "deposit.completed").map((e) => (e.data as { amount: number }).amount);

  it("lists every event oldest first, page after page", async () => {
    const all: AccountEvent[] = [];
    for await (const event of client.accountEvents({ pageSize: 2, types: ["deposit.completed"] }))
      all.push(event);
    // The first read of the sandbox funds it (10,000), then the five deposits.
    expect(amounts(all)).toEqual([10_000, 1, 2, 3, 4, 5]);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
  });

  it("resumes from a cursor file after a restart: nothing missed, nothing twice", async () => {
    const file = path.join(dir, "agent-1", "events.json");
    const seen: number[] = [];
    // The first run handles three events and stops.
    for await (const event of client.accountEvents({ cursor: new FileCursorStore(file), pageSize: 2 })) {
      seen.push(event.seq);
      if (seen.length === 3) break;
    }
    // The third was handed out but the loop ended before asking for more: it counts as handled only
    // if its seq was saved, which happens when the next one is asked for. So the restart gets it again.
    const saved = await new FileCursorStore(file).load();
    expect(saved).toBe(seen[1]);
    await client.sandbox.deposit(6);
    const second: number[] = [];
    for await (const event of client.accountEvents({ cursor: new FileCursorStore(file), pageSize: 2 }))
      second.push(event.seq);
    expect(second[0]).toBe(seen[2]);
    const everything: number[] = [];
    for await (const event of client.accountEvents({ pageSize: 100 })) everything.push(event.seq);
    expect([...seen.slice(0, 2), ...second]).toEqual(everything);
  });

  it("follows new events as they are recorded", async () => {
    const cursor = new MemoryCursorStore();
    for await (const event of client.accountEvents({ cursor })) void event; // catch up
    const controller = new AbortController();
    const arrived: number[] = [];
    const following = (async () => {
      for await (const event of client.accountEvents({
        cursor,
        follow: true,
        pollMs: 50,
        signal: controller.signal,
      })) {
        arrived.push((event.data as { amount: number }).amount);
        if (arrived.length === 2) controller.abort();
      }
    })();
    await client.sandbox.deposit(7);
    await client.sandbox.deposit(8);
    await following;
    expect(arrived).toEqual([7, 8]);
  });

  it("refuses a cursor file that is not one", async () => {
    const file = path.join(dir, "broken.json");
    writeFileSync(file, '{"after":"yesterday"}');
    await expect(new FileCursorStore(file).load()).rejects.toThrow(/does not hold a crossbook event cursor/);
  });
});
