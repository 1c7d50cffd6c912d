import { MAX_ANNOTATION_BYTES, parseIPPool, parseIPPools, type Parsed } from '../../src/spiderpool/candidate-annotations.js';
import { stepBudget, STEPS_PER_REVIEW } from '../../src/spiderpool/candidate-budget.js';
import type { DualStack } from '../../src/spiderpool/candidate-categories.js';
import { candidateWarnings, type CandidateSource } from '../../src/spiderpool/candidate-warnings.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { indexOf, STANDARD } from './candidate-pools.js';

const ON: DualStack = { known: true, enableIPv6: true };
const OFF: DualStack = { known: true, enableIPv6: false };
const UNKNOWN: DualStack = { known: false, reason: 'spiderpool-conf has not been listed yet' };

const source = (parsed: Parsed, annotation = 'ipam.spidernet.io/ippools'): CandidateSource => ({
  annotation,
  field: `metadata.annotations[${annotation}]`,
  refusal: 'the Pod gets no IP address when it starts',
  parsed,
});

const pools = (nics: object[]) => source(parseIPPools(JSON.stringify(nics)));
const warn = (s: CandidateSource, dualStack: DualStack = ON, index: PoolIndex = indexOf(STANDARD)) =>
  candidateWarnings(s, { pools: index, dualStack, budget: stepBudget() });

describe('category mix per NIC and IP version', () => {
  test("IaaS beside traditional: the issue's example", () => {
    const index = indexOf({ 'iaas-g': { iaas: true }, 'plain-b': {} });
    expect(warn(pools([{ interface: 'net1', ipv4: ['iaas-g', 'plain-b'] }]), OFF, index)).toEqual([
      'spiderpool: NIC "net1" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-g] will be used; traditional pools [plain-b] are ignored, with no fallback',
    ]);
  });

  test('one category only: no warning', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['iaas-a', 'iaas-b'], ipv6: ['plain-v6'] }]))).toEqual([]);
    expect(warn(pools([{ interface: 'eth0', ipv4: ['plain-a', 'plain-b'] }]))).toEqual([]);
  });

  test('node and global IaaS pools are one category', () => {
    const index = indexOf({ node: { iaas: true }, global: { iaas: true } });
    expect(warn(pools([{ interface: 'eth0', ipv4: ['node', 'global'] }]), OFF, index)).toEqual([]);
  });

  test('each NIC and each version on its own', () => {
    expect(
      warn(
        pools([
          { interface: 'eth0', ipv4: ['iaas-a'], ipv6: ['iaas-v6', 'plain-v6'] },
          { interface: 'net1', ipv4: ['plain-a', 'iaas-b'] },
        ]),
      ),
    ).toEqual([
      'spiderpool: NIC "eth0" IPv6 (ipam.spidernet.io/ippools): only IaaS pools [iaas-v6] will be used; traditional pools [plain-v6] are ignored, with no fallback',
      'spiderpool: NIC "net1" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-b] will be used; traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });

  test('NICs without interface are named by position', () => {
    expect(warn(pools([{ ipv4: ['iaas-a'] }, { ipv4: ['iaas-a', 'plain-a'] }]))).toEqual([
      'spiderpool: NIC "1" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });

  test('ipam.spidernet.io/ippool applies to every NIC', () => {
    expect(warn(source(parseIPPool('{"ipv4":["plain-a","iaas-a"]}'), 'ipam.spidernet.io/ippool'))).toEqual([
      'spiderpool: every NIC IPv4 (ipam.spidernet.io/ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });
});

describe('dual-stack: a paired IaaS primary pool ranks first only with enableIPv6 on', () => {
  const nic = pools([{ interface: 'eth0', ipv4: ['pair-v4', 'iaas-a'] }]);

  test('on: the paired pool is kept, the unpaired IaaS pool ignored', () => {
    expect(warn(nic, ON)).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only paired IaaS primary pools [pair-v4] will be used; IaaS pools [iaas-a] are ignored, with no fallback',
    ]);
  });

  test('off: both are IaaS pools, no mix', () => {
    expect(warn(nic, OFF)).toEqual([]);
  });

  test('three categories at once', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['plain-a', 'iaas-a', 'pair-v4'] }]), ON)).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only paired IaaS primary pools [pair-v4] will be used; IaaS pools [iaas-a] and traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });

  test('off: IPv6 candidates are dropped by Spiderpool, so not judged', () => {
    const v6 = pools([{ interface: 'eth0', ipv6: ['iaas-v6', 'plain-v6'] }]);
    expect(warn(v6, OFF)).toEqual([]);
    expect(warn(v6, ON)).toEqual([
      'spiderpool: NIC "eth0" IPv6 (ipam.spidernet.io/ippools): only IaaS pools [iaas-v6] will be used; traditional pools [plain-v6] are ignored, with no fallback',
    ]);
  });

  test('an IPv6 pool of a pair is an IaaS pool, not a primary', () => {
    expect(warn(pools([{ interface: 'eth0', ipv6: ['pair-v6', 'iaas-v6'] }]), ON)).toEqual([]);
  });

  test('an empty pair-pool annotation is no pair', () => {
    const index = indexOf({ p: { iaas: true, pair: '' }, q: { iaas: true } });
    expect(warn(pools([{ interface: 'eth0', ipv4: ['p', 'q'] }]), ON, index)).toEqual([]);
  });

  test('not known, and the answer depends on it: said so, not guessed', () => {
    expect(warn(nic, UNKNOWN)).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): paired IaaS primary pools [pair-v4] rank first only if dual-stack is on, which is not known: spiderpool-conf has not been listed yet',
    ]);
  });

  test('not known, but the same pools are kept either way: the mix is told', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['pair-v4', 'plain-a'] }]), UNKNOWN)).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [pair-v4] will be used; traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });
});

describe('wildcards (Go filepath.Match against the pools of that version)', () => {
  test('a pattern expands to the pools of its version only', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['*-a'], ipv6: ['*-v6'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-a] are ignored, with no fallback',
      'spiderpool: NIC "eth0" IPv6 (ipam.spidernet.io/ippools): only IaaS pools [pair-v6, iaas-v6] will be used; traditional pools [plain-v6] are ignored, with no fallback',
    ]);
  });

  test('classes and ?', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['iaas-[ab]', 'plain-?'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a, iaas-b] will be used; traditional pools [plain-a, plain-b] are ignored, with no fallback',
    ]);
  });

  test('a pattern matching no pool', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['iaas-a', 'gone-*'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): pattern "gone-*" matches no IPv4 SpiderIPPool',
    ]);
  });

  test('a pattern Go refuses refuses the whole annotation', () => {
    expect(
      warn(
        pools([
          { interface: 'eth0', ipv4: ['iaas-*'] },
          { interface: 'net1', ipv4: ['*['] },
        ]),
      ),
    ).toEqual([
      'spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: pattern "*[" is malformed (Go filepath.Match: syntax error in pattern); Spiderpool refuses it, so the Pod gets no IP address when it starts',
    ]);
  });

  test('"a[b" is no wildcard (HasWildcardInStr needs both brackets): a pool name that does not exist', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['a[b'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): SpiderIPPool "a[b" does not exist; Spiderpool fails the allocation when the Pod starts',
    ]);
  });

  test('the first chunk failing hides a bad later one, as in Go', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['zz*['] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): pattern "zz*[" matches no IPv4 SpiderIPPool',
    ]);
  });
});

describe('pools that do not exist or are of the other version', () => {
  test('named pools that do not exist get their own warning, the mix of the rest still told', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['iaas-a', 'plain-a', 'x1', 'x2', 'x3', 'x4'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): SpiderIPPools "x1", "x2", "x3" (+1) do not exist; Spiderpool fails the allocation when the Pod starts',
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-a] are ignored, with no fallback',
    ]);
  });

  test('an IPv6 pool named under ipv4', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['plain-v6'] }]))).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): SpiderIPPool "plain-v6" is not an IPv4 pool; name it under "ipv6"',
    ]);
  });
});

describe('the pools not known yet', () => {
  test('one warning saying so, nothing guessed', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['iaas-a', 'plain-a'] }]), OFF, new PoolIndex())).toEqual([
      'spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: the SpiderIPPool cache has not synced with the API server yet',
    ]);
  });

  test('a malformed annotation is told even then', () => {
    expect(warn(source(parseIPPools('[]')), OFF, new PoolIndex())).toEqual([
      'spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: must list at least one item; Spiderpool refuses it, so the Pod gets no IP address when it starts',
    ]);
  });
});

describe('bounds: one line under 256 characters without control characters', () => {
  const long = (c: string) => c.repeat(253);
  const index = indexOf({ [long('a')]: { iaas: true }, [long('b')]: { iaas: true }, [long('c')]: {}, [long('d')]: {}, [long('e')]: {} });
  test.each([
    ['long pool names', pools([{ interface: 'eth0', ipv4: ['*'] }])],
    ['a long NIC name', pools([{ interface: 'x'.repeat(5000), ipv4: [long('a'), long('c')] }])],
    ['control characters in a NIC name', pools([{ interface: 'eth0\n\u001b[31m\u2028', ipv4: [long('a'), long('c')] }])],
    ['control characters in a missing pool name', pools([{ interface: 'eth0', ipv4: ['a\r\nb\u0000', long('q')] }])],
    ['a refusal naming a long NIC', pools([{ interface: 'y'.repeat(3000) }, { interface: 'y'.repeat(3000) }])],
  ])('%s', (_name, s) => {
    const warnings = warn(s, ON, index);
    expect(warnings.length).toBeGreaterThan(0);
    for (const w of warnings) {
      expect(w.length).toBeLessThan(256);
      expect(w).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    }
  });

  test('more than three names are counted', () => {
    expect(warn(pools([{ interface: 'eth0', ipv4: ['*'] }]), OFF, index)[0]).toMatch(/traditional pools \[c+…, d+…, e+…\] are ignored/);
    const many = indexOf(Object.fromEntries([...Array(9).keys()].map((i) => [`p${i}`, i === 0 ? { iaas: true } : {}])));
    expect(warn(pools([{ interface: 'eth0', ipv4: ['p*'] }]), OFF, many)).toEqual([
      'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [p0] will be used; traditional pools [p1, p2, p3 (+5)] are ignored, with no fallback',
    ]);
  });
});

describe('a bounded amount of work per review', () => {
  test('ever more patterns against many pools: one warning, that it stopped checking and why', () => {
    const many = indexOf(Object.fromEntries([...Array(1000).keys()].map((i) => [`p${i}`, i === 0 ? { iaas: true } : {}])));
    const nics = [
      { interface: 'eth0', ipv4: ['p0', 'p1*'] },
      { interface: 'net1', ipv4: [...Array(300).keys()].map((i) => `x${i}*`) },
    ];
    expect(warn(pools(nics), OFF, many)).toEqual([
      `spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: their names and wildcards need more than ${STEPS_PER_REVIEW} steps against 1000 IPv4 pools, this webhook's per-review bound`,
    ]);
  });

  test('an annotation longer than the API server allows is not parsed', () => {
    const text = JSON.stringify([{ interface: 'eth0', ipv4: ['x'.repeat(MAX_ANNOTATION_BYTES)] }]);
    expect(warn(source(parseIPPools(text)))).toEqual([
      `spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: the value is longer than ${MAX_ANNOTATION_BYTES} bytes, the API server's limit for all annotations of an object`,
    ]);
  });
});
