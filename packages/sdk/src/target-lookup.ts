import dns, { type LookupAddress } from 'node:dns';

/** How long one lookup of a TCP tunnel's local host serves the connections that follow it. */
export const TARGET_LOOKUP_TTL_MS = 1000;

/** The options `net.connect` hands its `lookup` (dns.lookup's). */
interface LookupOptions {
  family?: number | 'IPv4' | 'IPv6' | undefined;
  hints?: number | undefined;
  all?: boolean | undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** What resolves a name: dns.lookup, or a stand-in in tests. */
export type Resolve = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * `net.connect`'s `lookup` for one TCP tunnel's local host (`svc tcp 22` connects to
 * `localhost`): the addresses one dns.lookup found serve every connection that starts within
 * TARGET_LOOKUP_TTL_MS of it. Node resolves a name again for every connection, and each
 * getaddrinfo() is a round trip to the libuv thread pool (two thread wake-ups) and about twenty
 * system calls there (a netlink query for the interfaces' addresses, /etc/hosts read again): for short connections,
 * a large share of the agent's CPU per connection (docs/performance.md, "TCP tunnels").
 *
 * Nothing else changes: the same dns.lookup with the options Node asks with (so `autoSelectFamily`
 * still tries every address it returns), a failed lookup is not kept, and `forget()` (called when
 * a connection fails) makes the next connection look the name up again, so a service that moved
 * is found at once. An IP address never reaches here: Node connects to it without a lookup.
 */
export class TargetLookup {
  private kept: { key: string; at: number; addresses: LookupAddress[] } | undefined;

  constructor(
    private readonly resolve: Resolve = (hostname, options, callback) => dns.lookup(hostname, options, callback),
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The `lookup` option of net.connect. Answers asynchronously, as dns.lookup does. */
  readonly lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const key = `${hostname}|${String(options.family ?? 0)}|${options.hints ?? 0}`;
    const kept = this.kept;
    if (kept !== undefined && kept.key === key && this.now() - kept.at < TARGET_LOOKUP_TTL_MS) {
      process.nextTick(answer, kept.addresses, options.all === true, callback);
      return;
    }
    const at = this.now();
    this.resolve(hostname, { family: options.family, hints: options.hints, all: true }, (error, addresses) => {
      if (error) {
        callback(error, options.all === true ? [] : '');
        return;
      }
      this.kept = { key, at, addresses };
      answer(addresses, options.all === true, callback);
    });
  };

  /** Drops what was kept: the next connection looks the name up again. */
  forget(): void {
    this.kept = undefined;
  }
}

/** All the addresses, or as dns.lookup without `all` answers: the first one and its family. */
function answer(addresses: LookupAddress[], all: boolean, callback: LookupCallback): void {
  if (all) return callback(null, addresses.slice());
  const first = addresses[0];
  if (first === undefined) return callback(Object.assign(new Error('no address found'), { code: 'ENOTFOUND' }), '');
  callback(null, first.address, first.family);
}
