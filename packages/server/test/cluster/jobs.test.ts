/**
 * Cluster-wide jobs: with leases in a shared PostgreSQL store, each job runs on one instance at a
 * time; another takes it over when the holder stops cleanly (at once) or dies or stalls (once the
 * lease has expired), and a holder that cannot extend its lease stops the job before anyone else
 * starts it. The order of starts and stops is what is checked, never how long they took.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterJob, ClusterJobs } from "../../src/cluster/jobs";
import { type LeaseStore, LocalLeases, StoreLeases } from "../../src/cluster/leases";
import * as repo from "../../src/cluster/repo";
import { silentLogger } from "../../src/infra/log";
import { createTestApp, type TestApp } from "../support/app";
import { STORE_BACKENDS } from "../support/backends";
import { until } from "../support/until";

const LEASE_MS = 900;

/** Every start and stop of the job, by instance, in the order they happened. */
const journal: string[] = [];
const recordingJob = (instance: string, name = "sweep"): ClusterJob => ({
  name,
  start: () => {
    journal.push(`${instance} start`);
  },
  stop: async () => {
    await new Promise((resolve) => setTimeout(resolve, 20)); // a stop that takes a moment
    journal.push(`${instance} stop`);
  },
});

/** Waits for the journal to show something (it is in the message when it does not). */
const waitFor = (condition: () => boolean) =>
  until(condition, { timeoutMs: 10_000, what: () => `the journal; it has: ${journal.join(", ")}` });

/** A lease store that can be made to hang, as a stalled or partitioned instance's would. */
class Stallable implements LeaseStore {
  stalled = false;
  constructor(private readonly inner: LeaseStore) {}
  #gate<T>(call: () => Promise<T>): Promise<T> {
    return this.stalled ? new Promise<T>(() => {}) : call();
  }
  take(job: string, holder: string, ttlMs: number) {
    return this.#gate(() => this.inner.take(job, holder, ttlMs));
  }
  extend(job: string, holder: string, token: number, ttlMs: number) {
    return this.#gate(() => this.inner.extend(job, holder, token, ttlMs));
  }
  end(job: string, holder: string, token: number) {
    return this.#gate(() => this.inner.end(job, holder, token));
  }
}

describe("cluster jobs on the embedded store", () => {
  it("run every job in the one process, and stop them all", async () => {
    const jobs = new ClusterJobs(new LocalLeases(), {
      instanceId: "solo",
      leaseMs: LEASE_MS,
      log: silentLogger,
    });
    journal.length = 0;
    jobs.add(recordingJob("solo", "a"));
    jobs.add(recordingJob("solo", "b"));
    await jobs.start();
    await waitFor(() => journal.length === 2);
    expect(jobs.status()).toEqual({ a: "running", b: "running" });
    await jobs.stop();
    expect(jobs.status()).toEqual({ a: "standby", b: "standby" });
    expect(journal.filter((e) => e.endsWith("stop"))).toHaveLength(2);
    expect(jobs.takeovers()).toEqual({ a: 0, b: 0 });
  });
});

describe.runIf(STORE_BACKENDS.includes("postgres"))("cluster jobs on PostgreSQL", () => {
  let t: TestApp;
  const running: ClusterJobs[] = [];
  const instance = (id: string, store: LeaseStore = new StoreLeases(t.runtime.store.db)) => {
    const jobs = new ClusterJobs(store, { instanceId: id, leaseMs: LEASE_MS, log: silentLogger });
    jobs.add(recordingJob(id));
    running.push(jobs);
    return jobs;
  };

  beforeAll(async () => {
    t = await createTestApp({ store: "postgres" });
  });
  afterAll(async () => {
    for (const jobs of running) await jobs.stop();
    await t?.close();
  });

  it("runs a job on one instance only; a clean stop hands it over at once", async () => {
    journal.length = 0;
    const one = instance("one");
    const two = instance("two");
    await one.start();
    await two.start();
    await waitFor(() => journal.length >= 1);
    expect(journal).toEqual(["one start"]);
    expect(one.status()).toEqual({ sweep: "running" });
    expect(two.status()).toEqual({ sweep: "standby" });
    // Several lease periods later it has not moved, nor started twice.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
    expect(journal).toEqual(["one start"]);

    await one.stop();
    await waitFor(() => journal.includes("two start"));
    expect(journal).toEqual(["one start", "one stop", "two start"]);
    expect(two.takeovers()).toEqual({ sweep: 1 });
    const [lease] = await repo.allLeases(t.runtime.store.db);
    expect(lease).toMatchObject({ job: "sweep", holder: "two", live: true });
    await two.stop();
  });

  it("a stalled holder stops its job before another instance starts it", async () => {
    journal.length = 0;
    const store = new Stallable(new StoreLeases(t.runtime.store.db));
    const one = instance("one", store);
    await one.start();
    await waitFor(() => journal.includes("one start"));
    const two = instance("two");
    await two.start();
    // The holder can no longer reach the store (a long pause, a partition): it cannot extend.
    store.stalled = true;
    await waitFor(() => journal.includes("two start"));
    // Fencing: the holder's own deadline stopped it before the lease expired for the other.
    expect(journal).toEqual(["one start", "one stop", "two start"]);
    expect(one.status()).toEqual({ sweep: "standby" });
    expect(two.status()).toEqual({ sweep: "running" });
    // Its store back, it stands by: the job has another holder now.
    store.stalled = false;
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    expect(journal).toEqual(["one start", "one stop", "two start"]);
    await two.stop();
  });
});
