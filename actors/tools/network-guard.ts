import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a tool may not reach unless private networks are allowed: loopback, private,
 * link-local (cloud metadata lives at 169.254.169.254), carrier-grade NAT, multicast, reserved,
 * documentation ranges, and IPv6 forms that embed an IPv4 address (NAT64, 6to4, Teredo), since
 * those could smuggle a private IPv4 past the check. IPv4-mapped IPv6 (::ffff:a.b.c.d) needs no
 * rule: BlockList checks it against the IPv4 rules.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32],
  ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Code of the error a refused address raises (the HTTP tool maps it to its plain message). */
export const BLOCKED_ADDRESS_CODE = 'ERR_PARLEY_BLOCKED_ADDRESS';

/** True when `address` (an IP literal) is one tools may not reach by default; non-IPs count as blocked. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses a host name when any of its addresses is blocked.
 * Checking at connect time (not before the request) closes the DNS-rebinding gap between a
 * check and a second resolution.
 */
export function guardedLookup(hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((a) => isBlockedAddress(a.address))) {
      const refused = Object.assign(new Error('address refused'), { code: BLOCKED_ADDRESS_CODE }) as NodeJS.ErrnoException;
      return callback(refused, '');
    }
    if ((options as LookupAllOptions).all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}
