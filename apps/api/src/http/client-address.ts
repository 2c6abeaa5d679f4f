import ipaddr from 'ipaddr.js';

/**
 * What the per-address limits count by: an IPv4 address (IPv4-mapped IPv6 included) as it is, an IPv6
 * address by its /64. One IPv6 subscriber usually holds a whole /64 (often far more), so counting single
 * addresses would give each client 2^64 fresh counters.
 */
export function clientKey(ip: string | undefined): string {
  // `req.ip` is undefined once the socket closed.
  if (!ip) return 'unknown';
  try {
    const address = ipaddr.process(ip);
    if (address.kind() === 'ipv4') return address.toString();
    const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  } catch {
    return ip;
  }
}

/** Express's `trust proxy` setting: a hop count, or the addresses of the proxies in front of the API. */
export type TTrustProxy = number | string[];

/** Names Express (proxy-addr) accepts in a list for the usual private ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const REFUSED_TRUE =
  'true would trust every hop, so a client could pick its own address with X-Forwarded-For (and dodge the per-address limits); give the number of proxies in front of the API (e.g. 1) or their addresses or CIDRs (e.g. 10.0.0.0/8,loopback)';

/**
 * `TRUST_PROXY`: unset, empty or `false` trusts no proxy (the socket's address); a whole number is the
 * number of proxies in front of the API (the client is that many addresses from the right of
 * X-Forwarded-For); otherwise a comma-separated list of proxy addresses, CIDRs or `loopback`,
 * `linklocal`, `uniquelocal`. `true` is refused: it trusts whatever the client writes.
 */
export function parseTrustProxy(value: string): TTrustProxy {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'false' || trimmed === 'no') return 0;
  if (trimmed === 'true' || trimmed === 'yes') throw new Error(REFUSED_TRUE);
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    if (hops > 20) throw new Error(`${hops} proxies in front of the API is not plausible (at most 20)`);
    return hops;
  }
  const entries = trimmed
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (NAMED_RANGES.has(entry)) continue;
    const valid = entry.includes('/') ? isCidr(entry) : ipaddr.isValid(entry);
    if (!valid) {
      throw new Error(
        `"${entry}" is not an IP address, a CIDR (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`,
      );
    }
  }
  return entries;
}

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}
