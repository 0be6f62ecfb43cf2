/**
 * Who is asking, for the limits that count per client (sign-in attempts, failed authentication,
 * unauthenticated stream sockets). Behind a reverse proxy the peer is the proxy, so the address
 * comes from X-Forwarded-For, but only through the proxies the operator named (`TRUST_PROXY`: a
 * hop count or their addresses), never "trust whatever the header says", which would let any
 * client pick a fresh address per request and walk past every per-address limit.
 *
 * Limits count IPv6 clients by their /64: one host usually holds a whole /64, so counting single
 * addresses would give it 2^64 budgets.
 */

import type { IncomingMessage } from "node:http";
import { isIPv4, isIPv6 } from "node:net";
import proxyaddr from "@fastify/proxy-addr";

/** false: use the peer address; a number: that many proxies in front; a list: trusted proxies. */
export type TrustProxy = false | number | string[];

/**
 * TRUST_PROXY as given: `false`/`0`/empty (no proxy), a hop count (`1`), or a comma-separated list
 * of proxy addresses or CIDR ranges (`10.0.0.1,10.1.0.0/16`, also `loopback`, `linklocal`,
 * `uniquelocal`). Returns the value or why it is refused.
 */
export function parseTrustProxy(raw: string | undefined): { value: TrustProxy } | { problem: string } {
  const text = (raw ?? "").trim();
  if (text === "" || text.toLowerCase() === "false" || text === "0") return { value: false };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 32) return { problem: "a hop count must be from 0 to 32" };
    return { value: hops };
  }
  if (["true", "yes", "1"].includes(text.toLowerCase())) {
    return {
      problem:
        "trusting every proxy would let any client choose its own address; give the number of proxies in front of crossbook (e.g. 1) or their addresses",
    };
  }
  const list = text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  for (const entry of list) {
    try {
      proxyaddr.compile(entry);
    } catch {
      return {
        problem: `${JSON.stringify(entry)} is not an IP address, a CIDR range, or loopback/linklocal/uniquelocal`,
      };
    }
  }
  return { value: list };
}

/** The trust function proxy-addr and Fastify take. */
export function trustFunction(trust: TrustProxy): (address: string, hop: number) => boolean {
  if (trust === false) return () => false;
  if (typeof trust === "number") return (_address, hop) => hop < trust;
  return proxyaddr.compile(trust);
}

/** The client's address for a raw Node request (stream upgrades), as Fastify's `request.ip` is. */
export function clientAddress(request: IncomingMessage, trust: TrustProxy): string {
  if (trust === false) return request.socket.remoteAddress ?? "unknown";
  return proxyaddr(request, trustFunction(trust));
}

/** The bucket a per-address limit counts in: the address for IPv4, the /64 for IPv6. */
export function addressBucket(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIPv6(address: string): string[] {
  const withoutZone = address.split("%")[0]!;
  const [head, tail] = withoutZone.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4 forms other than the mapped one) is two groups.
  const last = right.length > 0 ? right : left;
  const v4 = last.length > 0 && last[last.length - 1]!.includes(".") ? last.pop()! : undefined;
  if (v4) {
    const [a, b, c, d] = v4.split(".").map(Number) as [number, number, number, number];
    last.push(((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
  }
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill("0"), ...right].map((group) =>
    Number.parseInt(group || "0", 16).toString(16),
  );
}
