/** A port reserved by an account for its TCP tunnels (`POST /v1/tcp-addresses`). */
export interface TcpAddress {
  id: string;
  accountId: string;
  port: number;
  createdAt: number;
}

/** How a claim of a given port ended: `ok`, held by another account, or reserved by another. */
export type TcpClaim = 'ok' | 'taken' | 'not-yours';

/**
 * Ports of TCP tunnels. Every write is one statement whose conflict target is the port's primary
 * key, so two nodes (or two binds) racing for one port never both get it.
 */
export interface TcpAddressRepo {
  /** Takes a port nobody holds (or whose lease has lapsed) as a lease of `accountId`; false when it is held. */
  claimFree(port: number, accountId: string, nodeId: string, now: number): Promise<boolean>;
  /**
   * Takes a port back for the same account (a reconnect, `--remote-addr`): its own lease or
   * reservation, or a free one; `taken` when another account holds it, `not-yours` when another reserved it.
   */
  claimOwn(port: number, accountId: string, nodeId: string, now: number): Promise<TcpClaim>;
  /**
   * Takes the port a `--remote-addr` bind names: the account's reservation, or its own lease while
   * it is live or held for it (its running tunnel, or one whose agent is reconnecting). A free
   * port is no address of the account (`not-yours`), or `--remote-addr` would hand out any port
   * past the plan's limit of reservations; `taken` when another account's lease holds it.
   */
  claimAddress(port: number, accountId: string, nodeId: string, now: number): Promise<TcpClaim>;
  /** Keeps a lease its account's until `until` (a lost connection); reservations are untouched. */
  holdLease(port: number, accountId: string, until: number): Promise<void>;
  /** Drops a lease (a clean exit); reservations are untouched. */
  dropLease(port: number, accountId: string): Promise<void>;
  /** The leases a node held when it stopped: kept for their accounts until `until` (restart). */
  holdNodeLeases(nodeId: string, until: number): Promise<number>;
  /** Ports in [from, to] that are reserved or held at `now`. */
  takenPorts(from: number, to: number, now: number): Promise<Set<number>>;
  /** Reserves `port` for the account (free, a lapsed lease, or its own lease); undefined when held by another. */
  reserve(accountId: string, port: number, now: number): Promise<TcpAddress | undefined>;
  /** The account's reservations, lowest port first. */
  listReserved(accountId: string): Promise<TcpAddress[]>;
  countReserved(accountId: string): Promise<number>;
  /** Deletes one of the account's reservations; the deleted one, or undefined. */
  deleteReserved(accountId: string, id: string): Promise<TcpAddress | undefined>;
}
