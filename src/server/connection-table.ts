/**
 * Who holds the connection slots, and who gives one up when a newcomer arrives: the
 * policy of the connection cap, without sockets or timers (connections.ts applies it).
 * Per address, only connections waiting for their TLS handshake count against `maxPerAddress`;
 * at `maxConnections` a newcomer takes a slot doing no work (`choiceAtCap` says whose), never
 * a request received whole. Why: the API server opens a connection per concurrent call and
 * reuses its last idle one (docs/adr/0003-connection-policy.md, "Why only handshakes count").
 */

const CONNECTION_STATES = ['handshaking', 'idle', 'active'] as const;
/** `handshaking`: accepted, TLS not finished; `idle`: no request in flight; `active`: serving one. */
export type ConnectionState = (typeof CONNECTION_STATES)[number];

/**
 * Why a connection was closed by the server before its client was done with it:
 * `handshake_timeout` (no finished TLS handshake within the deadline), `address_share`
 * (its address was at its share of connections waiting for their TLS handshake: a newcomer from the
 * same address took its slot), `active_share` (its address had more than its share of
 * requests in flight and this one was lagging), `evicted_handshaking`, `evicted_idle` and
 * `evicted_lagging` (at the cap, its slot went to a newcomer; for `evicted_lagging`, a
 * lagging request, or one not received whole taken as a last resort).
 */
export const EVICTION_REASONS = ['handshake_timeout', 'address_share', 'active_share', 'evicted_handshaking', 'evicted_idle', 'evicted_lagging'] as const;
type EvictionReason = (typeof EVICTION_REASONS)[number];

/**
 * Why a newcomer was closed on arrival: `all_busy` (at the cap, every connection serving a
 * request), `over_share` (at the cap, its address held its fair share, no connection was
 * idle, and the handshaking or lagging ones were all of addresses not past their share).
 */
export const REJECTION_REASONS = ['all_busy', 'over_share'] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface ConnectionLimits {
  /** Slots in all, at least 1. */
  maxConnections: number;
  /** Connections waiting for their TLS handshake one client address may hold, at least 1 (established ones are not counted). */
  maxPerAddress: number;
  /** Requests in flight one address may hold while one of them lags (past it, its oldest lagging one gives way), at least 1. */
  maxActivePerAddress: number;
}

/**
 * Whether an active connection has read less than it should for its age (its body trickles,
 * or waits unread): the caller's judgement (connections.ts), asked only while choosing whom
 * to evict.
 */
export type Lagging<C> = (connection: C) => boolean;

/** A connection that gave way, and why. */
export interface Eviction<C> {
  connection: C;
  reason: Exclude<EvictionReason, 'handshake_timeout'>;
}

/** What `admit` decided: the newcomer tracked (and, at the cap, whose slot it took), or refused. */
export type Admission<C> = { admitted: true; evicted?: Eviction<C> } | { admitted: false; reason: RejectionReason };

interface Entry {
  address: string;
  state: ConnectionState;
  /** Requests received and not yet answered (HTTP/1.1 pipelining can make it more than one). */
  inFlight: number;
}

/** One client address's connections; per state in the order they entered it (the first is the oldest). */
interface AddressHold<C> {
  count: number;
  byState: Record<ConnectionState, Set<C>>;
}

/** Connections of `hold` doing no work: handshaking, idle, or active and lagging. */
const unproductive = <C>(hold: AddressHold<C>, lagging: Lagging<C>): number =>
  hold.byState.handshaking.size + hold.byState.idle.size + count(hold.byState.active, lagging);

/** The oldest handshaking connection of `hold`, else its longest idle one, else its oldest lagging one. */
const victimOf = <C>(hold: AddressHold<C>, lagging: Lagging<C>): C | undefined =>
  first(hold.byState.handshaking) ?? first(hold.byState.idle) ?? firstWhere(hold.byState.active, lagging);

const victimIn = <C>(hold: AddressHold<C> | undefined, lagging: Lagging<C>): C | undefined => (hold === undefined ? undefined : victimOf(hold, lagging));

const EVICTED_AT_CAP = { handshaking: 'evicted_handshaking', idle: 'evicted_idle', active: 'evicted_lagging' } as const;

const emptyStates = <C>(): Record<ConnectionState, Set<C>> => ({ handshaking: new Set(), idle: new Set(), active: new Set() });

/**
 * The connections of one server, by state and client address. `C` is whatever identifies
 * a connection to the caller (a socket). Every method is O(1) but `admit` at the cap,
 * which looks through the client addresses and idle connections (each at most `maxConnections`).
 */
export class ConnectionTable<C> {
  private readonly entries = new Map<C, Entry>();
  /** Per state, in the order the connections entered it: the first is the oldest. */
  private readonly byState: Record<ConnectionState, Set<C>> = emptyStates();
  private readonly addresses = new Map<string, AddressHold<C>>();

  constructor(private readonly limits: ConnectionLimits) {
    if (!(limits.maxConnections >= 1 && limits.maxPerAddress >= 1 && limits.maxActivePerAddress >= 1))
      throw new RangeError(`connection limits must be at least 1, got ${JSON.stringify(limits)}`);
  }

  /**
   * Decides on a newcomer from `address`. When admitted it is tracked as `handshaking`, and
   * an evicted connection is no longer tracked (the caller closes it). At the cap, active
   * connections that `lagging` names give way like idle ones, and those `incomplete` names
   * (a request not received whole) only as a last resort, for a newcomer within its share.
   */
  admit(connection: C, address: string, lagging: Lagging<C> = () => false, incomplete: Lagging<C> = () => false): Admission<C> {
    let evicted: Eviction<C> | undefined;
    const own = this.addresses.get(address);
    if (own !== undefined && own.byState.handshaking.size >= this.limits.maxPerAddress) {
      // At its share: its own oldest handshake gives way.
      evicted = { connection: first(own.byState.handshaking)!, reason: 'address_share' };
    } else if (this.entries.size >= this.limits.maxConnections) {
      const choice = this.choiceAtCap(own, lagging, incomplete);
      if ('refused' in choice) return { admitted: false, reason: choice.refused };
      evicted = { connection: choice.victim, reason: EVICTED_AT_CAP[this.entries.get(choice.victim)!.state] };
    }
    if (evicted !== undefined) this.remove(evicted.connection);
    let hold = this.addresses.get(address);
    if (hold === undefined) {
      hold = { count: 0, byState: emptyStates() };
      this.addresses.set(address, hold);
    }
    hold.count++;
    hold.byState.handshaking.add(connection);
    this.entries.set(connection, { address, state: 'handshaking', inFlight: 0 });
    this.byState.handshaking.add(connection);
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  /** The TLS handshake finished: idle until its first request. */
  secured(connection: C): void {
    const entry = this.entries.get(connection);
    if (entry?.state === 'handshaking') this.move(connection, entry, 'idle');
  }

  /**
   * A request arrived. When its address then has more than `maxActivePerAddress` requests in
   * flight, its oldest lagging connection gives way (no longer tracked; the caller closes it).
   */
  requestStarted(connection: C, lagging: Lagging<C> = () => false): Eviction<C> | undefined {
    const entry = this.entries.get(connection);
    if (entry === undefined) return undefined;
    entry.inFlight++;
    if (entry.state !== 'active') this.move(connection, entry, 'active');
    const active = this.addresses.get(entry.address)!.byState.active;
    if (active.size <= this.limits.maxActivePerAddress) return undefined;
    const victim = firstWhere(active, (c) => c !== connection && lagging(c));
    if (victim === undefined) return undefined;
    this.remove(victim);
    return { connection: victim, reason: 'active_share' };
  }

  /** A request was answered (or abandoned): idle from now on once none is in flight. */
  requestEnded(connection: C): void {
    const entry = this.entries.get(connection);
    if (entry === undefined || entry.inFlight === 0) return;
    if (--entry.inFlight === 0) this.move(connection, entry, 'idle');
  }

  /** The connection closed (or was evicted); unknown ones are ignored. */
  remove(connection: C): void {
    const entry = this.entries.get(connection);
    if (entry === undefined) return;
    this.entries.delete(connection);
    this.byState[entry.state].delete(connection);
    const hold = this.addresses.get(entry.address)!;
    hold.byState[entry.state].delete(connection);
    if (--hold.count === 0) this.addresses.delete(entry.address);
  }

  state(connection: C): ConnectionState | undefined {
    return this.entries.get(connection)?.state;
  }

  /** Connections in `state`, oldest first. */
  inState(state: ConnectionState): readonly C[] {
    return [...this.byState[state]];
  }

  counts(): Record<ConnectionState, number> {
    return { handshaking: this.byState.handshaking.size, idle: this.byState.idle.size, active: this.byState.active.size };
  }

  /**
   * At the cap, whose slot a newcomer from `own`'s address takes, or why it is refused. At
   * its fair share: its own, else the longest idle of an address at its share, else a slot
   * doing no work of an address past it, else any idle one (docs/adr/0003-connection-policy.md);
   * within it, from the address holding the most that do no work, else the oldest request not received whole of an
   * address past its share (under load, a flood's requests are younger than the 1 s that
   * makes them lagging).
   */
  private choiceAtCap(own: AddressHold<C> | undefined, lagging: Lagging<C>, incomplete: Lagging<C>): { victim: C } | { refused: RejectionReason } {
    const share = fairShare(this.limits.maxConnections, this.addresses.size + (own === undefined ? 1 : 0));
    const idlest = this.largestUnproductiveHold(lagging, () => true);
    if (own !== undefined && own.count >= share) {
      // Idle slots of addresses at their share go first; handshakes only of those past it (an even split is fair).
      const atShare = (hold: AddressHold<C>) => hold.count >= share;
      const pastShare = (hold: AddressHold<C>) => hold.count > share;
      const victim =
        victimOf(own, lagging) ??
        this.longestIdle(atShare) ??
        victimIn(this.largestUnproductiveHold(lagging, pastShare), lagging) ??
        this.longestIdle(() => true);
      if (victim !== undefined) return { victim };
      return { refused: idlest === undefined ? 'all_busy' : 'over_share' };
    }
    const victim = victimIn(idlest, lagging) ?? this.oldestIncompletePast(share, incomplete);
    return victim === undefined ? { refused: 'all_busy' } : { victim };
  }

  /** The connection idle for longest among those of addresses `test` accepts, if any. */
  private longestIdle(test: (hold: AddressHold<C>) => boolean): C | undefined {
    return firstWhere(this.byState.idle, (c) => test(this.addresses.get(this.entries.get(c)!.address)!));
  }

  /** The oldest connection `incomplete` names of the address holding the most connections, if it holds more than `share`. */
  private oldestIncompletePast(share: number, incomplete: Lagging<C>): C | undefined {
    let largest: AddressHold<C> | undefined;
    for (const hold of this.addresses.values()) if (hold.count > (largest?.count ?? share)) largest = hold;
    return largest === undefined ? undefined : firstWhere(largest.byState.active, incomplete);
  }

  /**
   * Of the addresses `test` accepts, the one holding the most handshaking, idle and lagging
   * connections, if any (the first seen on a tie): an address busy with many requests at
   * speed is not the one to give way.
   */
  private largestUnproductiveHold(lagging: Lagging<C>, test: (hold: AddressHold<C>) => boolean): AddressHold<C> | undefined {
    let largest: AddressHold<C> | undefined;
    let most = 0;
    for (const hold of this.addresses.values()) {
      const n = test(hold) ? unproductive(hold, lagging) : 0;
      if (n > most) [largest, most] = [hold, n];
    }
    return largest;
  }

  private move(connection: C, entry: Entry, to: ConnectionState): void {
    const hold = this.addresses.get(entry.address)!;
    this.byState[entry.state].delete(connection);
    hold.byState[entry.state].delete(connection);
    entry.state = to;
    // At the end: the newest in its state.
    this.byState[to].add(connection);
    hold.byState[to].add(connection);
  }
}

function first<T>(set: Set<T>): T | undefined {
  for (const value of set) return value;
  return undefined;
}

function firstWhere<T>(set: Set<T>, test: (value: T) => boolean): T | undefined {
  for (const value of set) if (test(value)) return value;
  return undefined;
}

function count<T>(set: Set<T>, test: (value: T) => boolean): number {
  let n = 0;
  for (const value of set) if (test(value)) n++;
  return n;
}

/**
 * One address's fair share of the cap, in connections: `maxConnections` split evenly among
 * `addresses` (those holding connections and the newcomer's), at least 1
 * (docs/adr/0003-connection-policy.md).
 */
export function fairShare(maxConnections: number, addresses: number): number {
  return Math.max(1, Math.floor(maxConnections / addresses));
}

/**
 * The default share of one client address in requests in flight while one of them lags:
 * half the slots (64 of 128). The API server's requests never lag (it writes a body at
 * once), so it is never held to it; a client trickling bodies keeps at most this many.
 */
export function defaultMaxActivePerAddress(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections / 2));
}

/**
 * The default share of one client address, in connections waiting for their TLS handshake:
 * a quarter of the slots (32 of the default 128). One kube-apiserver's handshakes take
 * milliseconds, so even a burst of new connections stays under it, and three replicas (the
 * usual HA control plane), each at its full share, still leave half to everyone else. An
 * address beyond it loses its own oldest handshake, never an established connection.
 */
export function defaultMaxPerAddress(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections / 4));
}
