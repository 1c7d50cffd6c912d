/**
 * The order in which bodies waiting for room in the body budget are let in: fair per client
 * address, so that one address posting large bodies on many connections cannot make the
 * API server's reviews wait for all of them (docs/adr/0002-json-shape-bounds.md, Fair order).
 */

/** A body waiting for room: its weighed `bytes` and its client's address. */
export interface QueuedBody {
  readonly bytes: number;
  readonly address: string;
}

/** What one address holds of the budget: its `heldBytes`, and `grantedSeq`, when it was last let in (a counter). */
export interface AddressShare {
  heldBytes: number;
  grantedSeq: number;
}

/**
 * The body to let in next from `waiting` (in arrival order), or undefined when none may go:
 * only the first waiter of each address counts (FIFO within an address). First an address
 * that holds nothing; then one within its share (`capacityBytes` split evenly among the
 * addresses holding or waiting) once given this body, or any when no other address waits;
 * the least recently let in first (round robin), then by arrival. The caller lets it in only
 * if it fits, and lets nobody past it otherwise, so a large body is not starved.
 */
export function nextToLetIn<T extends QueuedBody>(waiting: readonly T[], shares: ReadonlyMap<string, AddressShare>, capacityBytes: number): T | undefined {
  const heads = new Map<string, T>();
  for (const body of waiting) if (!heads.has(body.address)) heads.set(body.address, body);
  const addresses = new Set([...shares.keys(), ...heads.keys()]);
  const shareBytes = capacityBytes / addresses.size;
  let best: T | undefined;
  let bestRank = Infinity;
  for (const [address, head] of heads) {
    const share = shares.get(address);
    const heldBytes = share?.heldBytes ?? 0;
    // -1 ranks an address holding nothing ahead of every other (grantedSeq ≥ 0).
    const rank = heldBytes === 0 ? -1 : share!.grantedSeq;
    const mayTakeMore = heldBytes === 0 || heads.size === 1 || heldBytes + head.bytes <= shareBytes;
    if (mayTakeMore && rank < bestRank) {
      best = head;
      bestRank = rank;
    }
  }
  return best;
}
