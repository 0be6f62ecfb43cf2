/** Ids, hashing, the secret box and the master key: the small pieces security rests on. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { testConfig } from "../../src/config";
import { isoFromMs } from "../../src/infra/clock";
import { constantTimeEqual, hashPassword, sha256Hex, verifyPassword } from "../../src/infra/hashing";
import { newId, ulid } from "../../src/infra/ids";
import { SecretBox } from "../../src/infra/secretbox";
import { resolveMasterKey } from "../../src/runtime";

describe("ids", () => {
  it("are prefixed, 26 characters of Crockford base32, and sort by time then creation", () => {
    const a = newId("ord", 1_000);
    const b = newId("ord", 1_000);
    const c = newId("ord", 2_000);
    expect(a).toMatch(/^ord_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect([c, b, a].sort()).toEqual([a, b, c]);
    expect(new Set(Array.from({ length: 10_000 }, () => ulid())).size).toBe(10_000);
  });

  it("count up within one millisecond, carrying into the kept characters", () => {
    // 5,000 ids in one millisecond: the last character wraps about 150 times.
    const ids = Array.from({ length: 5_000 }, () => ulid(3_000));
    for (let i = 1; i < ids.length; i++) {
      expect(ids[i]! > ids[i - 1]!).toBe(true);
      expect(ids[i]!.slice(0, 10)).toBe(ids[0]!.slice(0, 10));
    }
    const value = (id: string) =>
      [...id.slice(10)].reduce(
        (n, ch) => n * 32n + BigInt("0123456789ABCDEFGHJKMNPQRSTVWXYZ".indexOf(ch)),
        0n,
      );
    expect(value(ids[4_999]!) - value(ids[0]!)).toBe(4_999n);
  });
});

describe("isoFromMs", () => {
  it("formats exactly like Date#toISOString, across seconds, days and out-of-range values", () => {
    const samples = [0, 999, 1_000, 1_795_000_000_000, 1_795_000_000_999, 1_795_000_001_000, 951_782_400_000];
    for (let i = 0; i < 5_000; i++) samples.push(Math.floor(Math.random() * 4_102_444_800_000));
    samples.push(1_795_000_000_000, 1_794_999_999_999); // back in time after a later second
    for (const ms of samples) expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
    expect(isoFromMs(1.5)).toBe(new Date(1.5).toISOString());
    expect(isoFromMs(-1)).toBe(new Date(-1).toISOString());
  });

  it("stays exact when calls alternate between two seconds (now and now + a lease)", () => {
    const now = 1_795_000_000_123;
    for (let i = 0; i < 3_000; i++) {
      const ms = now + i * 7;
      for (const t of [ms, ms + 30_000, ms, ms + 86_400_000, ms + 30_000]) {
        expect(isoFromMs(t)).toBe(new Date(t).toISOString());
      }
    }
  });
});

describe("hashing", () => {
  it("hashes passwords with scrypt and verifies only the right one", async () => {
    const hash = await hashPassword("correct horse battery", 10);
    expect(hash).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
    expect(await verifyPassword("correct horse batterY", hash)).toBe(false);
    expect(await verifyPassword("x", "garbage")).toBe(false);
    expect(await hashPassword("same", 10)).not.toBe(await hashPassword("same", 10));
  });

  it("compares in constant time and handles different lengths", () => {
    expect(constantTimeEqual(sha256Hex("a"), sha256Hex("a"))).toBe(true);
    expect(constantTimeEqual(sha256Hex("a"), sha256Hex("b"))).toBe(false);
    expect(constantTimeEqual("short", "longer")).toBe(false);
  });
});

describe("secret box", () => {
  const box = new SecretBox(Buffer.alloc(32, 7));

  it("round-trips and never stores the plaintext", () => {
    const sealed = box.seal("venue-private-key");
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain("venue-private-key");
    expect(box.open(sealed)).toBe("venue-private-key");
    expect(box.seal("same")).not.toBe(box.seal("same"));
  });

  it("rejects tampering, the wrong key and the wrong associated data", () => {
    const sealed = box.seal("secret", "wh_1");
    expect(box.open(sealed, "wh_1")).toBe("secret");
    expect(() => box.open(sealed, "wh_2")).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed, "wh_1")).toThrow();
    const parts = sealed.split(".");
    parts[3] = Buffer.from("tampered").toString("base64url");
    expect(() => box.open(parts.join("."), "wh_1")).toThrow();
  });
});

describe("master key", () => {
  it("generates a key file once with mode 0600 and reuses it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cb-key-"));
    const config = { ...testConfig(), masterKey: undefined, dataDir: dir };
    const first = resolveMasterKey(config);
    const file = path.join(dir, "master.key");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(resolveMasterKey(config).equals(first)).toBe(true);
    expect(first).toHaveLength(32);
  });

  it("prefers CROSSBOOK_MASTER_KEY", () => {
    expect(resolveMasterKey(testConfig()).equals(Buffer.alloc(32, 0))).toBe(true);
  });
});
