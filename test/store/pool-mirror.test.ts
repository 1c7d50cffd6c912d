/**
 * The warn-only worker's pool mirror: fed by the index's change messages (cloned as a
 * worker receives them), the candidate-pool reviewer decides on it exactly as on the
 * index itself, through pool adds, updates and deletes.
 */
import { PoolIndex } from '../../src/store/pool-index.js';
import { MirrorMessageSchema, PoolMirror, mirrorMessages, snapshot } from '../../src/store/pool-mirror.js';
import { createCandidateReviewer } from '../../src/rules/candidate-registry.js';
import { createReviewer } from '../../src/rules/registry.js';
import { loadReview } from '../fixtures/load.js';
import { poolObject, STANDARD, type PoolSpec } from '../spiderpool/candidate-pools.js';

const ON = { known: true as const, enableIPv6: true };

/** A mirror following `index` from now on, every message cloned and checked as the worker takes it. */
function mirrorOf(index: PoolIndex): { mirror: PoolMirror; messages: unknown[] } {
  const mirror = new PoolMirror('not yet', ON);
  const messages: unknown[] = [];
  const apply = (message: unknown) => {
    messages.push(message);
    mirror.apply(MirrorMessageSchema.parse(structuredClone(message)));
  };
  apply(snapshot(index));
  index.onChange((touched) => mirrorMessages(index, touched).forEach(apply));
  return { mirror, messages };
}

/** Every warn-only fixture review, decided on `index` and on `mirror`. */
function decisions(index: PoolIndex, mirror: PoolMirror) {
  const names = [
    'pod-create-mixed-pools',
    'deployment-create-mixed-pools',
    'cronjob-create-mixed-pools',
    'namespace-update-mixed-defaults',
    'pod-create-malformed-pools',
  ];
  const onIndex = createReviewer({ pools: index, dualStack: () => ON });
  const onMirror = createCandidateReviewer({ pools: mirror, dualStack: () => mirror.dualStack() });
  return names.map((name) => [onIndex(loadReview(name)).review, onMirror(loadReview(name)).review]);
}

/** The names of the pools of `version` that `held` (an index or its mirror) holds, sorted. */
const namesOf = (held: PoolIndex | PoolMirror, version: 4 | 6) =>
  held
    .ofVersion(version)
    .map((e) => e.name)
    .sort();
const pools = (specs: Record<string, PoolSpec>) => Object.entries(specs).map(([name, spec]) => poolObject(name, spec));

describe('PoolMirror', () => {
  test('before the first list it is unavailable, as the index', () => {
    const index = new PoolIndex();
    const { mirror } = mirrorOf(index);
    expect(mirror.unavailable()).toBe(index.unavailable());
    expect(mirror.unavailable()).toBeDefined();
  });

  test('follows a complete list, adds, updates and deletes: the same decisions as the index', () => {
    const index = new PoolIndex();
    const { mirror } = mirrorOf(index);
    index.replaceAll(pools(STANDARD));
    expect(mirror.unavailable()).toBeUndefined();
    for (const [a, b] of decisions(index, mirror)) expect(b).toEqual(a);

    index.upsert(poolObject('plain-b', { iaas: true })); // update: traditional to IaaS
    index.upsert(poolObject('iaas-c', { iaas: true, pair: 'pair-v6' })); // add, in a pair
    index.remove('iaas-a'); // delete
    index.upsert(poolObject('iaas-v6', { version: 4, iaas: true })); // update: other version
    expect(mirror.get('iaas-a')).toBeUndefined();
    expect(mirror.get('plain-b')?.metadata.annotations).toEqual({ 'ipam.spidernet.io/iaas-provider': 'example-cloud' });
    for (const version of [6, 4] as const) expect(namesOf(mirror, version)).toEqual(namesOf(index, version));
    const after = decisions(index, mirror);
    for (const [a, b] of after) expect(b).toEqual(a);
    expect(after[0]![0]).not.toEqual(decisions(new PoolIndex(), new PoolMirror('x', ON))[0]![0]); // the pools decided something
  });

  test('messages carry the fields the candidate rules read, not the objects', () => {
    const index = new PoolIndex();
    const { messages } = mirrorOf(index);
    index.replaceAll(pools(STANDARD));
    const before = messages.length;
    index.upsert(poolObject('pair-v4', { iaas: true, pair: 'iaas-v6' }));
    expect(messages.slice(before)).toContainEqual({
      type: 'upsert',
      pool: { name: 'pair-v4', version: 4, iaasProvider: 'example-cloud', pairPool: 'iaas-v6' },
    });
    index.remove('plain-a');
    expect(messages.at(-1)).toEqual({ type: 'delete', name: 'plain-a' });
  });

  test('a dual-stack message changes what the reviewer reads', () => {
    const mirror = new PoolMirror('x', ON);
    mirror.apply({ type: 'dualStack', dualStack: { known: false, reason: 'r' } });
    expect(mirror.dualStack()).toEqual({ known: false, reason: 'r' });
  });
});
