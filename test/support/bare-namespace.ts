// A network namespace with only loopback, for tests that prove something runs without the machine's
// services: the Postgres and Redis ports are in another namespace, and the Postgres socket directory is
// hidden behind an empty tmpfs. Making one needs root (as in CI) and `unshare` (bareNamespaceMissing, system-tools.ts).

/** The bash lines that make the namespace usable and hide the socket; run them first inside `unshare -n -m`. */
export const BARE_NAMESPACE_PREAMBLE = `
ip link set lo up
mount -t tmpfs tmpfs /var/run/postgresql
`;

/** Fails (exit 90) when the machine's Postgres or Redis can still be reached: the test would prove nothing. */
export function assertServicesUnreachable(ports: readonly number[], failWith = 'exit 90'): string {
  return ports.map((port) => `if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then echo "port ${port} is reachable: not a bare machine"; ${failWith}; fi`).join('\n');
}

