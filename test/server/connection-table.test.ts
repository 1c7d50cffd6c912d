/**
 * The connection cap's policy without sockets: the per-address share of connections
 * waiting for their handshake (established ones not counted), who is evicted at the cap (handshaking oldest,
 * then idle longest, never an active one), and when a newcomer is refused.
 */
import { ConnectionTable, defaultMaxPerAddress, fairShare } from '../../src/server/connection-table.js';

const table = (maxConnections: number, maxPerAddress = maxConnections, maxActivePerAddress = maxConnections) =>
  new ConnectionTable<string>({ maxConnections, maxPerAddress, maxActivePerAddress });
/** `admit`'s judgements of the others' requests: none lagging, every one not yet received whole. */
const noneLagging = () => false;
const allIncomplete = () => true;

describe('the per-address share', () => {
  it("gives a newcomer from an address at its share the slot of that address's oldest handshaking connection", () => {
    const t = table(10, 2);
    expect(t.admit('a1', '10.0.0.1')).toEqual({ admitted: true });
    t.admit('b1', '10.0.0.2'); // older than a2, but another address's
    expect(t.admit('a2', '10.0.0.1')).toEqual({ admitted: true });
    expect(t.admit('a3', '10.0.0.1')).toEqual({ admitted: true, evicted: { connection: 'a1', reason: 'address_share' } });
    expect(t.counts()).toEqual({ handshaking: 3, idle: 0, active: 0 });
    expect(t.state('b1')).toBe('handshaking');
  });

  it('counts only connections waiting for their handshake: established ones, idle or busy, are left to the cap', () => {
    const t = table(10, 2);
    t.admit('busy', 'a');
    t.secured('busy');
    t.requestStarted('busy');
    t.admit('idle', 'a');
    t.secured('idle');
    // Neither counts: 'a' holds no handshake of its share of 2.
    expect(t.admit('new', 'a')).toEqual({ admitted: true });
    expect(t.admit('newer', 'a')).toEqual({ admitted: true });
    expect(t.admit('third', 'a')).toEqual({ admitted: true, evicted: { connection: 'new', reason: 'address_share' } });
    expect([t.state('busy'), t.state('idle')]).toEqual(['active', 'idle']);
  });

  it('never counts connections serving a request: one address with more busy connections than its share is served in full', () => {
    const t = table(100, 4);
    // 40 concurrent calls from one API server replica, each on a connection of its own.
    for (let i = 0; i < 40; i++) {
      expect(t.admit(`call${i}`, '10.0.0.1')).toEqual({ admitted: true });
      t.secured(`call${i}`);
      t.requestStarted(`call${i}`);
    }
    expect(t.counts()).toEqual({ handshaking: 0, idle: 0, active: 40 });
    // Another address's idle connection is not taken for it either.
    t.admit('b-idle', '10.0.0.2');
    t.secured('b-idle');
    expect(t.admit('call40', '10.0.0.1')).toEqual({ admitted: true });
    expect(t.state('b-idle')).toBe('idle');
  });

  it("never closes an address's idle connections for its share (an API server's pool it is about to reuse); the cap bounds them", () => {
    const t = table(6, 2);
    for (let i = 0; i < 6; i++) {
      expect(t.admit(`c${i}`, '10.0.0.1')).toEqual({ admitted: true });
      t.secured(`c${i}`);
    }
    expect(t.counts()).toEqual({ handshaking: 0, idle: 6, active: 0 });
    // At the cap its longest-idle connection gives way to a newcomer.
    t.requestStarted('c0');
    t.requestEnded('c0'); // c0 is now the most recently idle
    expect(t.admit('d', '10.0.0.1')).toEqual({ admitted: true, evicted: { connection: 'c1', reason: 'evicted_idle' } });
  });

  it('gives the share back when a connection of the address closes', () => {
    const t = table(10, 1);
    t.admit('a1', '10.0.0.1');
    t.remove('a1');
    expect(t.admit('a2', '10.0.0.1')).toEqual({ admitted: true });
  });

  it('at the cap and at its share, an address pushes out only its own connection', () => {
    const t = table(2, 1);
    t.admit('b1', '10.0.0.2'); // the oldest of the server
    t.admit('a1', '10.0.0.1');
    expect(t.admit('a2', '10.0.0.1')).toEqual({ admitted: true, evicted: { connection: 'a1', reason: 'address_share' } });
    expect(t.state('b1')).toBe('handshaking');
  });

  it('defaults to a quarter of the cap, at least 1', () => {
    expect(defaultMaxPerAddress(128)).toBe(32);
    expect(defaultMaxPerAddress(3)).toBe(1);
  });
});

describe('at the cap', () => {
  it('takes the slot from the address holding the most handshaking and idle connections, not from the oldest handshake of a small client', () => {
    const t = table(4);
    t.admit('apiserver', '10.0.0.1'); // the oldest handshake of the server
    t.admit('n1', '10.0.0.9');
    t.secured('n1');
    t.admit('n2', '10.0.0.9');
    t.secured('n2');
    t.admit('n3', '10.0.0.9');
    expect(t.admit('new', '10.0.0.5')).toEqual({ admitted: true, evicted: { connection: 'n3', reason: 'evicted_handshaking' } });
    expect(t.state('apiserver')).toBe('handshaking');
  });

  it('counts only handshaking and idle connections: an address busy with more requests is passed over', () => {
    const t = table(6);
    for (const c of ['b1', 'b2', 'b3']) {
      t.admit(c, 'apiserver');
      t.secured(c);
      t.requestStarted(c);
    }
    t.admit('b-idle', 'apiserver'); // 4 in all, 1 unproductive
    t.secured('b-idle');
    t.admit('n1', 'neighbour'); // 2 in all, both unproductive
    t.admit('n2', 'neighbour');
    expect(t.admit('new', 'third')).toEqual({ admitted: true, evicted: { connection: 'n1', reason: 'evicted_handshaking' } });
    expect(t.state('b-idle')).toBe('idle');
  });

  it('passes over a larger address whose connections all serve requests', () => {
    const t = table(3);
    for (const c of ['b1', 'b2']) {
      t.admit(c, 'busy');
      t.secured(c);
      t.requestStarted(c);
    }
    t.admit('small', 'other');
    expect(t.admit('new', 'third')).toEqual({ admitted: true, evicted: { connection: 'small', reason: 'evicted_handshaking' } });
  });

  it("evicts that address's oldest connection still waiting for its handshake first, even when idle ones are older", () => {
    const t = table(3);
    t.admit('idle', 'x');
    t.secured('idle');
    t.admit('hs-old', 'x');
    t.admit('hs-new', 'x');
    expect(t.admit('new', 'w')).toEqual({ admitted: true, evicted: { connection: 'hs-old', reason: 'evicted_handshaking' } });
    expect(t.state('hs-old')).toBeUndefined();
    expect(t.state('idle')).toBe('idle');
  });

  it('then the connection idle for longest (by the end of its last request, not its age)', () => {
    const t = table(2);
    t.admit('first', 'x');
    t.secured('first');
    t.admit('second', 'x');
    t.secured('second');
    // "first" served a request after "second" became idle: "second" has been idle longer.
    t.requestStarted('first');
    t.requestEnded('first');
    expect(t.admit('new', 'z')).toEqual({ admitted: true, evicted: { connection: 'second', reason: 'evicted_idle' } });
  });

  it('never evicts an active connection: with all of them serving a request the newcomer is refused', () => {
    const t = table(2);
    for (const c of ['a', 'b']) {
      t.admit(c, c);
      t.secured(c);
      t.requestStarted(c);
    }
    expect(t.admit('new', 'z')).toEqual({ admitted: false, reason: 'all_busy' });
    expect(t.counts()).toEqual({ handshaking: 0, idle: 0, active: 2 });
    t.requestEnded('b');
    expect(t.admit('new', 'z')).toEqual({ admitted: true, evicted: { connection: 'b', reason: 'evicted_idle' } });
  });

  it('keeps a pipelined connection active until its last request is answered', () => {
    const t = table(1);
    t.admit('p', 'x');
    t.secured('p');
    t.requestStarted('p');
    t.requestStarted('p');
    t.requestEnded('p');
    expect(t.state('p')).toBe('active');
    expect(t.admit('new', 'y')).toEqual({ admitted: false, reason: 'all_busy' });
    t.requestEnded('p');
    expect(t.state('p')).toBe('idle');
  });

  it("frees the evicted connection's address share", () => {
    const t = table(1, 1);
    t.admit('a1', 'a');
    t.admit('b1', 'b'); // evicts a1
    expect(t.admit('a2', 'a')).toMatchObject({ admitted: true, evicted: { connection: 'b1', reason: 'evicted_handshaking' } });
  });
});

describe('bookkeeping', () => {
  it('ignores events for connections it does not hold, and a second remove', () => {
    const t = table(2);
    t.secured('ghost');
    t.requestStarted('ghost');
    t.requestEnded('ghost');
    t.remove('ghost');
    t.admit('a', 'x');
    t.remove('a');
    t.remove('a');
    expect(t.counts()).toEqual({ handshaking: 0, idle: 0, active: 0 });
    expect(t.admit('b', 'x')).toEqual({ admitted: true });
  });

  it('does not move an active connection back to idle on a late handshake event', () => {
    const t = table(2);
    t.admit('a', 'x');
    t.secured('a');
    t.requestStarted('a');
    t.secured('a');
    expect(t.state('a')).toBe('active');
  });

  it('lists a state oldest first', () => {
    const t = table(5);
    for (const c of ['a', 'b', 'c']) t.admit(c, c);
    t.secured('b');
    expect(t.inState('handshaking')).toEqual(['a', 'c']);
    expect(t.inState('idle')).toEqual(['b']);
  });

  it('refuses limits under 1', () => {
    expect(() => table(0)).toThrow(RangeError);
    expect(() => table(2, 0)).toThrow(/at least 1/);
  });
});

describe('lagging requests (a body trickled, or unread) give way like idle connections', () => {
  /** `n` connections from `address`, each with a request in flight. */
  const busy = (t: ConnectionTable<string>, address: string, n: number) => {
    for (let i = 0; i < n; i++) {
      t.admit(`${address}-${i}`, address);
      t.secured(`${address}-${i}`);
      t.requestStarted(`${address}-${i}`);
    }
  };

  it("at the cap, the oldest lagging connection of the address holding the most lagging ones takes the newcomer's place", () => {
    const t = table(4);
    busy(t, 'slow', 3);
    busy(t, 'api', 1);
    const lagging = (c: string) => c.startsWith('slow') || c === 'api-0';
    expect(t.admit('new', 'api', lagging)).toEqual({ admitted: true, evicted: { connection: 'slow-0', reason: 'evicted_lagging' } });
    t.secured('new');
    t.requestStarted('new');
    // Without lagging ones, every request is at work: refused as before.
    expect(t.admit('newer', 'api', noneLagging)).toEqual({ admitted: false, reason: 'all_busy' });
  });

  it('idle and handshaking connections give way before lagging ones', () => {
    const t = table(3);
    busy(t, 'slow', 2);
    t.admit('idle', 'slow');
    t.secured('idle');
    expect(t.admit('new', 'api', () => true)).toEqual({ admitted: true, evicted: { connection: 'idle', reason: 'evicted_idle' } });
  });

  it("at the cap, an address at its fair share gives way from its own connections, never another address's handshake", () => {
    // 3 of the attacker's 4 requests are fresh (not lagging yet); the client's one handshake is the cap's only idle slot.
    const t = table(5);
    busy(t, 'attacker', 4);
    t.admit('client', 'client');
    const lagging = (c: string) => c === 'attacker-0';
    expect(t.admit('attacker-new', 'attacker', lagging)).toEqual({ admitted: true, evicted: { connection: 'attacker-0', reason: 'evicted_lagging' } });
    t.secured('attacker-new');
    t.requestStarted('attacker-new');
    // None of its own may give way now: refused, and the client keeps its slot.
    expect(t.admit('attacker-newer', 'attacker', noneLagging)).toEqual({ admitted: false, reason: 'over_share' });
    expect(t.state('client')).toBe('handshaking');
  });

  it("a newcomer at its fair share never takes another address's handshake, not even with its own slots all at work", () => {
    // The flake under load: the attacker's requests are too young to lag, the client is mid-handshake.
    const t = table(5);
    busy(t, 'attacker', 4);
    t.admit('client', 'client');
    expect(t.admit('attacker-new', 'attacker', noneLagging, allIncomplete)).toEqual({ admitted: false, reason: 'over_share' });
    expect(t.state('client')).toBe('handshaking');
  });

  it.each([1, 31, 126])('an API server at its fair share takes the idle slots of an attacker spread over %i addresses, never refused', (attackers) => {
    // The API server's first call is in flight; 127 idle connections fill the rest of the cap.
    const t = table(128);
    busy(t, 'api', 1);
    for (let i = 0; i < 127; i++) {
      t.admit(`idle-${i}`, `pod-${i % attackers}`);
      t.secured(`idle-${i}`);
    }
    for (let i = 1; i <= 127; i++) {
      const admission = t.admit(`api-${i}`, 'api');
      expect(admission).toMatchObject({ admitted: true, evicted: { reason: 'evicted_idle' } });
      expect(admission.admitted && admission.evicted?.connection).toMatch(/^idle-/);
      t.secured(`api-${i}`);
      t.requestStarted(`api-${i}`);
    }
    expect(t.counts()).toEqual({ handshaking: 0, idle: 0, active: 128 });
  });

  it("an API server over its fair share with many reviews in flight takes an attacker's idle slot", () => {
    const t = table(128);
    busy(t, 'api', 100);
    for (let i = 0; i < 28; i++) {
      t.admit(`idle-${i}`, 'attacker');
      t.secured(`idle-${i}`);
    }
    expect(t.admit('api-new', 'api')).toEqual({ admitted: true, evicted: { connection: 'idle-0', reason: 'evicted_idle' } });
  });

  it('a newcomer at its fair share takes its own, then the longest idle of an address at its share, then slots of one past it, then any idle', () => {
    // Cap 8 among 'a' (the newcomer's, 2), 'big' (5) and 'small' (1): share 2.
    const t = table(8);
    busy(t, 'a', 1);
    t.admit('a-hs', 'a');
    t.admit('small-idle', 'small'); // idle longer than big-idle, but 'small' is within its share
    t.secured('small-idle');
    busy(t, 'big', 2);
    t.admit('big-hs', 'big');
    t.admit('big-idle', 'big');
    t.secured('big-idle');
    t.admit('big-lag', 'big');
    t.secured('big-lag');
    t.requestStarted('big-lag');
    const lagging = (c: string) => c === 'big-lag';
    // 'big' is past its share until it holds 2: then its last slot at work stays.
    for (const [i, victim] of ['a-hs', 'big-idle', 'big-hs', 'big-lag', 'small-idle'].entries()) {
      expect(t.admit(`new-${i}`, 'a', lagging)).toMatchObject({ admitted: true, evicted: { connection: victim } });
      t.secured(`new-${i}`);
      t.requestStarted(`new-${i}`);
    }
    expect(t.admit('new-last', 'a', lagging)).toEqual({ admitted: false, reason: 'all_busy' });
  });

  it('a newcomer at its fair share does not take the handshake of an address holding exactly its share', () => {
    const t = table(4);
    busy(t, 'attacker', 2);
    busy(t, 'api', 1);
    t.admit('api-hs', 'api');
    // Even were the API server's request lagging: 2 of 4 is its share, not past it.
    const lagging = (c: string) => c.startsWith('api');
    expect(t.admit('attacker-new', 'attacker', lagging, allIncomplete)).toEqual({ admitted: false, reason: 'over_share' });
    expect([t.state('api-hs'), t.state('api-0')]).toEqual(['handshaking', 'active']);
  });

  it('at the cap, an address within its fair share still takes the slot of the one holding the most that do no work', () => {
    const t = table(5);
    busy(t, 'attacker', 3);
    t.admit('idle', 'attacker');
    t.secured('idle');
    t.admit('client', 'client');
    // The attacker holds 4 of 5: past its share of 2, the client's second within it.
    expect(t.admit('client-2', 'client', noneLagging)).toEqual({ admitted: true, evicted: { connection: 'idle', reason: 'evicted_idle' } });
  });

  it('when nothing does no work, a newcomer within its share takes the oldest request not received whole of the address holding the most', () => {
    // Under load the flood's requests are younger than the 1 s that makes them lagging.
    const t = table(4);
    busy(t, 'attacker', 3);
    busy(t, 'api', 1);
    const incomplete = (c: string) => c !== 'attacker-0';
    expect(t.admit('api-new', 'api', noneLagging, incomplete)).toEqual({ admitted: true, evicted: { connection: 'attacker-1', reason: 'evicted_lagging' } });
    // The attacker, at its share, does not get it back from the other address.
    expect(t.admit('attacker-new', 'attacker', noneLagging, allIncomplete)).toEqual({ admitted: false, reason: 'over_share' });
    expect(t.state('api-new')).toBe('handshaking');
    // An address within its share keeps its requests: with every slot at work, refused.
    const even = table(2);
    busy(even, 'a', 1);
    busy(even, 'b', 1);
    expect(even.admit('c-new', 'c', noneLagging, allIncomplete)).toEqual({ admitted: false, reason: 'all_busy' });
  });

  it('splits the cap evenly among the addresses holding connections, at least 1', () => {
    expect(fairShare(128, 2)).toBe(64);
    expect(fairShare(128, 9)).toBe(14);
    expect(fairShare(2, 5)).toBe(1);
  });

  it('an address past its share of requests in flight loses its own oldest lagging one, never one at work', () => {
    const t = table(10, 10, 2);
    busy(t, 'slow', 2);
    t.admit('third', 'slow');
    t.secured('third');
    expect(t.requestStarted('third', () => false)).toBeUndefined(); // none lags: the API server's burst
    t.admit('fourth', 'slow');
    t.secured('fourth');
    expect(t.requestStarted('fourth', (c) => c !== 'slow-0')).toEqual({ connection: 'slow-1', reason: 'active_share' });
    expect(t.state('slow-1')).toBeUndefined();
    expect(t.counts()).toEqual({ handshaking: 0, idle: 0, active: 3 });
  });
});
