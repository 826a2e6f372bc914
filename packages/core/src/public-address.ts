import ipaddr from 'ipaddr.js';

/**
 * Whether an IP literal is globally routable unicast: never loopback, private, link-local (cloud metadata
 * lives there), unique-local, multicast or reserved, IPv4 hidden in IPv6 (::ffff:127.0.0.1) included. The
 * one rule for every address this service connects to on someone else's word (a webhook receiver, a
 * catalogued resource); ranges come from ipaddr.js's tables.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291, e.g. ::7f00:1 = 127.0.0.1): ipaddr.js calls
    // these "unicast", and some stacks still route them to the embedded IPv4. No public host uses them.
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return parsed.range() === 'unicast';
}
