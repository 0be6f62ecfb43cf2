/**
 * SSRF guard for webhook URLs. A webhook URL is chosen by a user but fetched by our server, so a URL
 * pointing at loopback, the private network or a cloud metadata address (169.254.169.254) would let
 * any account make our server call its own neighbours. We allow only https URLs whose host resolves
 * exclusively to global unicast addresses; the sender then connects to exactly the addresses checked
 * here (no second DNS lookup), which closes the DNS-rebinding gap between check and connect.
 *
 * `allowPrivate` (self-hosted setups whose receivers live on the LAN) lifts the address and
 * localhost checks, never the https-only and no-credentials rules. `allowLoopback` (`crossbook
 * demo` only) admits loopback addresses, over http too: a receiver on the same machine, where
 * nothing crosses a network. Refusals for private addresses name WEBHOOK_ALLOW_PRIVATE_NETWORKS,
 * the switch a self-hosted server has.
 *
 * Addresses are matched with node:net BlockList against the IANA special-purpose registries
 * (RFC 6890 and successors); IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) are judged by the IPv4 address they carry.
 */
import { promises as dns } from "node:dns";
import { BlockList, isIP } from "node:net";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all of its addresses (like `dns.lookup(host, { all: true })`). */
export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>;

export type AddressVerdict = { allowed: boolean; reason?: string };

export type UrlCheck =
  | { ok: true; url: URL; addresses: ResolvedAddress[] }
  | { ok: false; reason: string; field: "url" };

export interface UrlCheckOptions {
  allowPrivate: boolean;
  /** Loopback receivers allowed, over http too (the demo). */
  allowLoopback?: boolean;
  lookup?: LookupFn;
}

/** The policies a URL is judged by (what `checkWebhookUrlWithoutDns` depends on). */
export type UrlPolicy = Pick<UrlCheckOptions, "allowPrivate" | "allowLoopback">;

/** The end of every refusal of a private or reserved target: what a self-hosted server can change. */
const PUBLIC_ONLY =
  "webhooks may only reach public addresses (a self-hosted server can allow others with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)";

type Rule = { list: BlockList; reason: string };

function rules(family: "ipv4" | "ipv6", entries: Array<[string, number, string]>): Rule[] {
  return entries.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, reason: `${reason} (${network}/${prefix})` };
  });
}

// First match wins, so narrower ranges come before the ranges that contain them.
export const IPV4_DENY = rules("ipv4", [
  ["0.0.0.0", 8, "unspecified address / this network"],
  ["10.0.0.0", 8, "private network"],
  ["100.64.0.0", 10, "shared address space (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local, including cloud metadata"],
  ["172.16.0.0", 12, "private network"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation (TEST-NET-1)"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private network"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation (TEST-NET-2)"],
  ["203.0.113.0", 24, "documentation (TEST-NET-3)"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
]);

const IPV6_DENY = rules("ipv6", [
  ["::", 128, "unspecified address"],
  ["::1", 128, "loopback"],
  ["::", 96, "deprecated IPv4-compatible address"],
  ["64:ff9b:1::", 48, "local-use NAT64"],
  ["100::", 64, "discard-only"],
  ["2001::", 32, "Teredo"],
  ["2001:db8::", 32, "documentation"],
  ["2001::", 23, "IETF protocol assignments"],
  ["3fff::", 20, "documentation"],
  ["fc00::", 7, "unique local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local (deprecated)"],
  ["ff00::", 8, "multicast"],
]);

const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet("2000::", 3, "ipv6");

/** Canonical address text for an IP in any form WHATWG URL accepts (`0x7f.1`, `[::1]`), or null. */
function normalizeIp(input: string): { ip: string; family: 4 | 6 } | null {
  let text = input.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  // A zone id ("fe80::1%eth0") only makes sense for link-local targets; never a webhook.
  if (text.includes("%")) return null;
  const family = isIP(text);
  if (family === 4 || family === 6) return { ip: text, family };
  // Shorthand, hex, octal and decimal IPv4 forms, normalised the way the URL we connect to would be.
  if (!/^[0-9a-fA-FxX.]+$/.test(text)) return null;
  try {
    const host = new URL(`https://${text}/`).hostname;
    return isIP(host) === 4 ? { ip: host, family: 4 } : null;
  } catch {
    return null;
  }
}

/** The 16 bytes of a valid IPv6 address (as accepted by `isIP`). */
function ipv6Bytes(ip: string): Uint8Array {
  let text = ip;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    for (const part of text.slice(lastColon + 1).split(".")) tail.push(Number(part));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(rest === undefined ? 0 : missing).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((value, i) => bytes[i] === value);
}

/** The IPv4 address an IPv6 address carries, for the forms that are routed to that IPv4 host. */
function embeddedIpv4(ip: string): { v4: string; form: string } | null {
  const b = ipv6Bytes(ip);
  const dotted = (offset: number) => Array.from(b.subarray(offset, offset + 4)).join(".");
  if (startsWith(b, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]))
    return { v4: dotted(12), form: "IPv4-mapped" };
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return { v4: dotted(12), form: "NAT64" };
  if (startsWith(b, [0x20, 0x02])) return { v4: dotted(2), form: "6to4" };
  return null;
}

/**
 * The IPv4 rules as (network, mask) integers: checked on every delivery attempt, and a BlockList
 * check builds a native socket address each time, which costs more than the whole comparison.
 * The BlockLists stay the reference (`IPV4_DENY`); a test keeps the two in agreement.
 */
const IPV4_DENY_INT = IPV4_DENY.map((rule) => {
  const [network, prefix] = rule.reason.slice(rule.reason.lastIndexOf("(") + 1, -1).split("/") as [
    string,
    string,
  ];
  const mask = Number(prefix) === 0 ? 0 : (0xffffffff << (32 - Number(prefix))) >>> 0;
  return { network: (ipv4ToInt(network)! & mask) >>> 0, mask, reason: rule.reason };
});

function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    const octet = Number(part);
    if (!Number.isInteger(octet) || octet < 0 || octet > 255 || part === "") return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function classifyIpv4(ip: string): AddressVerdict {
  const value = ipv4ToInt(ip);
  if (value === undefined) {
    for (const rule of IPV4_DENY)
      if (rule.list.check(ip, "ipv4")) return { allowed: false, reason: rule.reason };
    return { allowed: true };
  }
  for (const rule of IPV4_DENY_INT) {
    if ((value & rule.mask) >>> 0 === rule.network) return { allowed: false, reason: rule.reason };
  }
  return { allowed: true };
}

/** A loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127.x), in canonical text (normalizeIp). */
function isLoopback(ip: { ip: string; family: 4 | 6 }): boolean {
  if (ip.family === 4) return ip.ip.startsWith("127.");
  const embedded = embeddedIpv4(ip.ip);
  if (embedded) return embedded.form === "IPv4-mapped" && embedded.v4.startsWith("127.");
  return ipv6Bytes(ip.ip).every((byte, i) => byte === (i === 15 ? 1 : 0));
}

/** May a webhook delivery connect to this address? Accepts IPv4/IPv6 text, bracketed or not. */
export function classifyAddress(ip: string): AddressVerdict {
  const parsed = typeof ip === "string" ? normalizeIp(ip) : null;
  if (!parsed) return { allowed: false, reason: "not an IP address" };
  if (parsed.family === 4) return classifyIpv4(parsed.ip);

  const embedded = embeddedIpv4(parsed.ip);
  if (embedded) {
    const inner = classifyIpv4(embedded.v4);
    return inner.allowed
      ? { allowed: true }
      : { allowed: false, reason: `${embedded.form} address of ${embedded.v4}: ${inner.reason}` };
  }
  for (const rule of IPV6_DENY) {
    if (rule.list.check(parsed.ip, "ipv6")) return { allowed: false, reason: rule.reason };
  }
  if (!GLOBAL_UNICAST_V6.check(parsed.ip, "ipv6")) {
    return { allowed: false, reason: "not a global unicast address (outside 2000::/3)" };
  }
  return { allowed: true };
}

export const defaultLookup: LookupFn = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

function refuse(reason: string): UrlCheck {
  return { ok: false, reason, field: "url" };
}

function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

/**
 * The part of the check that needs no DNS: scheme, credentials, and the whole verdict when the host
 * is an IP literal. Returns null when the host is a name that must be resolved. A pure function of
 * its inputs, so callers may cache what it returns (the sender does, per URL).
 */
export function checkWebhookUrlWithoutDns(url: string, opts: UrlPolicy): UrlCheck | null {
  const first = precheck(url, opts);
  return "hostname" in first ? null : first;
}

function precheck(url: string, opts: UrlPolicy): UrlCheck | { url: URL; hostname: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse("not a valid URL");
  }
  // http passes here only for the demo's loopback receivers; judge() checks every address is one.
  if (parsed.protocol === "http:" && !opts.allowLoopback)
    return refuse(
      "webhook URLs must use https; http is not allowed (`crossbook demo` allows it for receivers on its own machine)",
    );
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    return refuse(`webhook URLs must use https, not ${parsed.protocol}`);
  if (parsed.username !== "" || parsed.password !== "") {
    return refuse("webhook URLs must not contain credentials (user:password@)");
  }
  const hostname = parsed.hostname;
  if (hostname === "") return refuse("webhook URL has no host");

  const literal = normalizeIp(hostname);
  if (!literal) {
    if (!opts.allowPrivate && !opts.allowLoopback && isLocalhostName(hostname)) {
      return refuse(`${hostname} is a loopback name; ${PUBLIC_ONLY}`);
    }
    return { url: parsed, hostname };
  }
  return judge(parsed, null, [{ address: literal.ip, family: literal.family }], opts);
}

/**
 * Every address must be allowed; `hostname` is null for an IP-literal URL. The reason given back is
 * shown to the user (registration errors, delivery records): for an IP literal it names the address
 * and its range, which the user wrote; for a host name it never says which address the name
 * resolved to, nor its range, so the guard cannot be used to map the internal network.
 */
function judge(
  parsed: URL,
  hostname: string | null,
  addresses: ResolvedAddress[],
  opts: UrlPolicy,
): UrlCheck {
  const plainHttp = parsed.protocol === "http:";
  for (const { address } of addresses) {
    const ip = normalizeIp(address);
    if (opts.allowLoopback && ip && isLoopback(ip)) continue;
    if (plainHttp) {
      return refuse(
        `http is allowed only for receivers on this machine (loopback); ${hostname ?? address} is not one: use https`,
      );
    }
    const verdict = classifyAddress(address);
    if (verdict.allowed) continue;
    if (opts.allowPrivate && ip) continue;
    if (hostname !== null) {
      return refuse(
        ip
          ? `${hostname} resolves to a private or reserved address; ${PUBLIC_ONLY}`
          : `${hostname} resolves to something that is not an IP address`,
      );
    }
    return refuse(`${address} is not a public address (${verdict.reason}); ${PUBLIC_ONLY}`);
  }
  return {
    ok: true,
    url: parsed,
    addresses: addresses.map(({ address, family }) => {
      const ip = normalizeIp(address);
      return ip ? { address: ip.ip, family: ip.family } : { address, family };
    }),
  };
}

/**
 * Validate a webhook URL and resolve its host. Call it before every delivery attempt and connect
 * only to the returned `addresses`: DNS answers change, and a check made at registration time says
 * nothing about where the name points an hour later.
 */
export async function checkWebhookUrl(url: string, opts: UrlCheckOptions): Promise<UrlCheck> {
  const first = precheck(url, opts);
  if (!("hostname" in first)) return first;
  const { url: parsed, hostname } = first;
  let addresses: ResolvedAddress[];
  try {
    addresses = await (opts.lookup ?? defaultLookup)(hostname.replace(/\.$/, ""));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code ?? "lookup failed";
    return refuse(`could not resolve ${hostname} (${code})`);
  }
  if (addresses.length === 0) return refuse(`${hostname} has no addresses`);
  return judge(parsed, hostname, addresses, opts);
}
