import { type LookupAddress, lookup } from 'node:dns';
import { ipLiteralHost, isForbiddenAddress } from '@sps/core';

export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
}

/** Which resolved addresses may not be contacted; `true` for an address means refuse it. */
export type TAddressPolicy = (address: string) => boolean;

/** `allowPrivate: true` allows every address; `false` applies the shared policy; a function replaces it. */
function forbiddenBy(policy: boolean | TAddressPolicy): TAddressPolicy {
  if (typeof policy === 'function') return policy;
  return policy ? () => false : isForbiddenAddress;
}

type TLookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * Shared by the webhook deliveries and the media downloads: both fetch URLs that API users chose.
 * A `dns.lookup` replacement for got's `dnsLookup`: resolves the host and refuses loopback, private,
 * link-local, metadata and other non-public addresses at connect time, so the address that is checked
 * is the address that is used (no DNS-rebinding gap between a check and the connection).
 */
export function guardedLookup(policy: boolean | TAddressPolicy) {
  const forbidden = forbiddenBy(policy);
  return (
    hostname: string,
    options: { all?: boolean } | number | TLookupCallback,
    callback?: TLookupCallback,
  ): void => {
    const cb = (typeof options === 'function' ? options : callback) as TLookupCallback;
    const opts = typeof options === 'object' ? options : {};
    lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return cb(err, []);
      const bad = addresses.find((a) => forbidden(a.address));
      if (bad)
        return cb(new ForbiddenAddressError(`refused: ${hostname} resolves to a non-public address`), []);
      if (opts.all) return cb(null, addresses);
      const first = addresses[0];
      if (!first) return cb(new ForbiddenAddressError(`refused: ${hostname} has no address`), []);
      cb(null, first.address, first.family);
    });
  };
}

/** IP-literal hosts never reach a lookup function, so they are checked before the request. */
export function assertDeliverableUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'https:' && !allowPrivate)
    throw new ForbiddenAddressError('refused: the URL is not HTTPS');
  const literal = ipLiteralHost(url);
  if (literal && !allowPrivate && isForbiddenAddress(literal)) {
    throw new ForbiddenAddressError(`refused: ${literal} is not a public address`);
  }
}

/**
 * Media URLs given by API users: http and https only (a media host is often a plain-http CDN or
 * bucket, and nothing secret is sent to it; what protects internal services is the address check,
 * and what protects the networks is the byte check after the download). IP-literal hosts are
 * checked here because they never reach `guardedLookup`; every redirect hop is checked again.
 */
export function assertFetchableMediaUrl(url: URL, policy: boolean | TAddressPolicy): void {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ForbiddenAddressError('refused: only http and https media URLs are fetched');
  }
  const literal = ipLiteralHost(url);
  if (literal && forbiddenBy(policy)(literal)) {
    throw new ForbiddenAddressError(`refused: ${literal} is not a public address`);
  }
}
