/**
 * SSRF guard: the address matrix (every refused range, its edges, public examples, IPv6 forms that
 * embed an IPv4 address) and the URL rules (https only, no credentials, no localhost, every
 * resolved address checked). DNS is always injected: nothing here touches the network.
 */
import { describe, expect, it } from "vitest";
import {
  checkWebhookUrl,
  classifyAddress,
  type LookupFn,
  type ResolvedAddress,
} from "../../src/webhooks/ssrf";

const refused: Array<[string, RegExp]> = [
  // IPv4
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["0.0.0.0", /unspecified/],
  ["0.1.2.3", /this network/],
  ["10.0.0.1", /private/],
  ["10.255.255.255", /private/],
  ["172.16.0.1", /private/],
  ["172.31.255.255", /private/],
  ["192.168.1.1", /private/],
  ["169.254.169.254", /link-local.*metadata/],
  ["169.254.0.1", /link-local/],
  ["100.64.0.1", /CGNAT/],
  ["100.127.255.255", /CGNAT/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.250", /multicast/],
  ["255.255.255.255", /broadcast/],
  ["240.0.0.1", /reserved/],
  ["250.1.2.3", /reserved/],
  ["198.18.0.1", /benchmarking/],
  ["198.19.255.255", /benchmarking/],
  ["192.0.2.1", /documentation/],
  ["198.51.100.7", /documentation/],
  ["203.0.113.9", /documentation/],
  ["192.0.0.8", /IETF protocol/],
  ["192.88.99.1", /6to4 relay/],
  // IPv6
  ["::1", /loopback/],
  ["::", /unspecified/],
  ["fe80::1", /link-local/],
  ["febf:ffff::1", /link-local/],
  ["fc00::1", /unique local/],
  ["fd12:3456:789a::1", /unique local/],
  ["fec0::1", /site-local/],
  ["ff02::1", /multicast/],
  ["ff0e::101", /multicast/],
  ["2001:db8::1", /documentation/],
  ["3fff::1", /documentation/],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", /Teredo/],
  ["2001:2::1", /IETF protocol/],
  ["100::1", /discard/],
  ["64:ff9b:1::1", /local-use NAT64/],
  ["::7f00:1", /IPv4-compatible/],
  ["::8.8.8.8", /IPv4-compatible/],
  ["::ffff:0:808:808", /global unicast/], // SIIT IPv4-translated, ::ffff:0:0:0/96
  ["5f00::1", /global unicast/],
  ["4000::1", /global unicast/],
  // IPv6 forms carrying a refused IPv4 address
  ["::ffff:127.0.0.1", /IPv4-mapped.*127\.0\.0\.1.*loopback/],
  ["::ffff:7f00:1", /IPv4-mapped.*loopback/],
  ["0:0:0:0:0:ffff:a9fe:a9fe", /IPv4-mapped.*169\.254\.169\.254/],
  ["::ffff:10.1.2.3", /IPv4-mapped.*private/],
  ["64:ff9b::7f00:1", /NAT64.*loopback/],
  ["64:ff9b::192.168.0.1", /NAT64.*private/],
  ["2002:7f00:1::", /6to4.*loopback/],
  ["2002:c0a8:101::1", /6to4.*192\.168\.1\.1.*private/],
  ["2002:a9fe:a9fe::", /6to4.*metadata/],
];

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.215.14",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001:80b::200e",
  // Edges just outside the refused ranges.
  "9.255.255.255",
  "11.0.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "100.63.255.255",
  "100.128.0.0",
  "169.253.255.255",
  "192.167.255.255",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255",
  "192.0.3.1",
  "2001:200::1",
  "2003::1",
  // IPv6 forms carrying a public IPv4 address are judged by that address.
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
  "2002:808:808::1",
];

describe("classifyAddress", () => {
  it.each(refused)("refuses %s", (ip, reason) => {
    const verdict = classifyAddress(ip);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(reason);
  });

  it.each(allowed)("allows %s", (ip) => {
    expect(classifyAddress(ip)).toEqual({ allowed: true });
  });

  it("accepts bracketed IPv6 as URL.hostname gives it", () => {
    expect(classifyAddress(new URL("https://[::ffff:127.0.0.1]/").hostname).allowed).toBe(false);
    expect(classifyAddress("[::1]").reason).toMatch(/loopback/);
    expect(classifyAddress("[2606:4700:4700::1111]")).toEqual({ allowed: true });
  });

  it("reads hex, shorthand and decimal IPv4 the way a URL does", () => {
    for (const ip of ["0x7f.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1"]) {
      expect(classifyAddress(ip).reason, ip).toMatch(/loopback/);
    }
    expect(classifyAddress("0x0a.1").reason).toMatch(/private/);
    expect(classifyAddress("134744072")).toEqual({ allowed: true }); // 8.8.8.8
  });

  it("refuses what is not an IP address, and scoped IPv6", () => {
    for (const value of [
      "",
      "example.com",
      "1.2.3.4.5",
      "::g",
      "fe80::1%eth0",
      "2606:4700::1111%1",
      "1.2.3.256",
    ]) {
      expect(classifyAddress(value).allowed, value).toBe(false);
    }
    expect(classifyAddress(undefined as unknown as string).allowed).toBe(false);
  });
});

function fakeDns(table: Record<string, string[]>): LookupFn & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

const dns = () =>
  fakeDns({
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "internal.example.com": ["10.0.0.5"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": ["93.184.215.14", "192.168.1.10"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "v6private.example.com": ["fd00::1"],
    "empty.example.com": [],
  });

describe("checkWebhookUrl", () => {
  it("accepts an https URL on a public host and returns every checked address", async () => {
    const result = await checkWebhookUrl("https://hooks.example.com:8443/in?x=1", {
      allowPrivate: false,
      lookup: dns(),
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.url.href).toBe("https://hooks.example.com:8443/in?x=1");
    expect(result.addresses).toEqual([
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
  });

  it("refuses http, with a reason that says https is required", async () => {
    const lookup = dns();
    const result = await checkWebhookUrl("http://hooks.example.com/in", { allowPrivate: false, lookup });
    expect(result).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/https/) });
    expect(lookup.calls).toEqual([]);
  });

  it("refuses other schemes and unparseable URLs", async () => {
    for (const url of [
      "ftp://hooks.example.com/",
      "file:///etc/passwd",
      "hooks.example.com/in",
      "https://",
      "",
    ]) {
      const result = await checkWebhookUrl(url, { allowPrivate: false, lookup: dns() });
      expect(result.ok, url).toBe(false);
    }
  });

  it("refuses credentials in the URL", async () => {
    for (const url of [
      "https://user:pw@hooks.example.com/",
      "https://user@hooks.example.com/",
      "https://:pw@hooks.example.com/",
    ]) {
      const result = await checkWebhookUrl(url, { allowPrivate: false, lookup: dns() });
      expect(result).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/credentials/) });
    }
  });

  it("refuses localhost names without asking DNS", async () => {
    const lookup = dns();
    for (const url of [
      "https://localhost/",
      "https://LOCALHOST:8443/",
      "https://api.localhost/",
      "https://localhost./",
    ]) {
      const result = await checkWebhookUrl(url, { allowPrivate: false, lookup });
      expect(result).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/loopback name/) });
    }
    expect(lookup.calls).toEqual([]);
  });

  it("refuses IP-literal hosts in refused ranges, in every spelling a URL accepts", async () => {
    const lookup = dns();
    for (const url of [
      "https://127.0.0.1/",
      "https://0x7f.1/",
      "https://2130706433/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://169.254.169.254/latest/meta-data/",
      "https://[64:ff9b::a9fe:a9fe]/",
      "https://[2002:a00:1::]/",
    ]) {
      const result = await checkWebhookUrl(url, { allowPrivate: false, lookup });
      expect(result.ok, url).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/not a public address/);
    }
    expect(lookup.calls).toEqual([]);
  });

  it("accepts a public IP-literal host without DNS", async () => {
    const result = await checkWebhookUrl("https://[2606:4700:4700::1111]:8443/", { allowPrivate: false });
    expect(result.ok && result.addresses).toEqual([{ address: "2606:4700:4700::1111", family: 6 }]);
  });

  it.each([
    ["internal.example.com", "10.0.0.5"],
    ["metadata.example.com", "169.254.169.254"],
    ["mapped.example.com", "127.0.0.1"],
    ["v6private.example.com", "fd00::1"],
  ])("refuses %s, which resolves to a refused address, without naming the address", async (host, address) => {
    const result = await checkWebhookUrl(`https://${host}/hook`, { allowPrivate: false, lookup: dns() });
    expect(result).toEqual({
      ok: false,
      field: "url",
      reason: `${host} resolves to a private or reserved address; webhooks may only reach public addresses (a self-hosted server can allow others with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)`,
    });
    // Neither the address nor its range: the guard must not map the internal network for a caller.
    expect(result.ok || result.reason).not.toContain(address);
    expect(result.ok || result.reason).not.toMatch(/loopback|link-local|unique local|\/\d+\)/);
  });

  it("refuses a host with one public and one private address, naming neither", async () => {
    const result = await checkWebhookUrl("https://mixed.example.com/", {
      allowPrivate: false,
      lookup: dns(),
    });
    expect(result).toEqual({
      ok: false,
      field: "url",
      reason: expect.stringMatching(/^mixed\.example\.com resolves to a private or reserved address/),
    });
    expect(result.ok || result.reason).not.toMatch(/192\.168|93\.184/);
  });

  it("names the address and its range for an IP-literal URL, which the user wrote", async () => {
    const result = await checkWebhookUrl("https://10.1.2.3/hook", { allowPrivate: false, lookup: dns() });
    expect(result).toEqual({
      ok: false,
      field: "url",
      reason: expect.stringMatching(
        /^10\.1\.2\.3 is not a public address \(private network \(10\.0\.0\.0\/8\)\)/,
      ),
    });
  });

  it("refuses names that do not resolve, or resolve to nothing", async () => {
    const unknown = await checkWebhookUrl("https://nowhere.example.com/", {
      allowPrivate: false,
      lookup: dns(),
    });
    expect(unknown).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/ENOTFOUND/) });
    const empty = await checkWebhookUrl("https://empty.example.com/", { allowPrivate: false, lookup: dns() });
    expect(empty).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/no addresses/) });
  });

  it("with allowPrivate, lifts the address and localhost checks but not https-only or credentials", async () => {
    const lookup = fakeDns({
      localhost: ["127.0.0.1"],
      "mixed.example.com": ["93.184.215.14", "192.168.1.10"],
    });
    for (const url of [
      "https://mixed.example.com/",
      "https://10.1.2.3/",
      "https://[::1]:8443/",
      "https://localhost/",
    ]) {
      const result = await checkWebhookUrl(url, { allowPrivate: true, lookup });
      expect(result.ok, url).toBe(true);
    }
    expect(await checkWebhookUrl("http://10.1.2.3/", { allowPrivate: true, lookup })).toMatchObject({
      ok: false,
    });
    expect(await checkWebhookUrl("https://u:p@10.1.2.3/", { allowPrivate: true, lookup })).toMatchObject({
      ok: false,
    });
  });

  it("still refuses a resolver answer that is not an IP address, even with allowPrivate", async () => {
    const lookup: LookupFn = async () => [{ address: "not-an-ip", family: 4 }];
    const result = await checkWebhookUrl("https://odd.example.com/", { allowPrivate: true, lookup });
    expect(result).toEqual({ ok: false, field: "url", reason: expect.stringMatching(/not an IP address/) });
  });
});

describe("the integer IPv4 check agrees with the BlockList rules", () => {
  it("for random addresses and every range edge", async () => {
    const { IPV4_DENY } = await import("../../src/webhooks/ssrf");
    const fc = (await import("fast-check")).default;
    const reference = (ip: string) => !IPV4_DENY.some((rule) => rule.list.check(ip, "ipv4"));
    const edges = [
      "0.0.0.0",
      "9.255.255.255",
      "10.0.0.0",
      "100.63.255.255",
      "100.64.0.0",
      "100.127.255.255",
      "100.128.0.0",
      "126.255.255.255",
      "127.0.0.1",
      "128.0.0.0",
      "172.15.255.255",
      "172.16.0.0",
      "172.31.255.255",
      "172.32.0.0",
      "198.17.255.255",
      "198.18.0.0",
      "198.19.255.255",
      "198.20.0.0",
      "223.255.255.255",
      "224.0.0.0",
      "239.255.255.255",
      "240.0.0.0",
      "255.255.255.254",
      "255.255.255.255",
      "8.8.8.8",
    ];
    for (const ip of edges) expect(classifyAddress(ip).allowed, ip).toBe(reference(ip));
    fc.assert(
      fc.property(fc.ipV4(), (ip) => classifyAddress(ip).allowed === reference(ip)),
      { numRuns: 5_000 },
    );
  });
});
