/** Candidate-pool warnings through the reviewer: fixture AdmissionReviews of every kind the warnings cover. */
import { createReviewer, type ReviewOptions } from '../../src/rules/registry.js';
import { STEPS_PER_REVIEW } from '../../src/spiderpool/candidate-budget.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { loadReview } from '../fixtures/load.js';
import { indexOf, poolObject, STANDARD } from '../spiderpool/candidate-pools.js';

const OFF = () => ({ known: true as const, enableIPv6: false });
const ON = () => ({ known: true as const, enableIPv6: true });
const review = (name: string, options: ReviewOptions = { pools: indexOf(STANDARD), dualStack: ON }) =>
  createReviewer(options)(loadReview(name)).review.response;

const TEMPLATE_WARNINGS = [
  'spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback',
  'spiderpool: NIC "net1" IPv6 (ipam.spidernet.io/ippools): only IaaS pools [iaas-v6] will be used; traditional pools [plain-v6] are ignored, with no fallback',
];

describe('workload Pod templates (CREATE and UPDATE): allowed, with the warnings', () => {
  test.each([
    'deployment-create-mixed-pools',
    'deployment-update-mixed-pools',
    'statefulset-create-mixed-pools',
    'daemonset-create-mixed-pools',
    'replicaset-create-mixed-pools',
    'job-create-mixed-pools',
    'cronjob-create-mixed-pools',
  ])('%s', (name) => {
    const uid = loadReview(name).request['uid'];
    expect(review(name)).toEqual({ uid, allowed: true, warnings: TEMPLATE_WARNINGS });
  });

  test('a template without pool annotations: allowed, no warning', () => {
    const body = loadReview('deployment-create-mixed-pools');
    body.request['object'].spec.template.metadata.annotations = { 'example.com/other': 'x' };
    expect(createReviewer({ pools: indexOf(STANDARD), dualStack: ON })(body).review.response).toEqual({ uid: 'deployment-create', allowed: true });
  });

  test('a subnet annotation decides first: skipped', () => {
    const body = loadReview('deployment-create-mixed-pools');
    body.request['object'].spec.template.metadata.annotations['ipam.spidernet.io/subnet'] = '{"ipv4":["subnet-a"]}';
    expect(createReviewer({ pools: indexOf(STANDARD), dualStack: ON })(body).review.response).toEqual({ uid: 'deployment-create', allowed: true });
  });

  test('ippool beside ippools is not read, and says so', () => {
    const body = loadReview('deployment-create-mixed-pools');
    body.request['object'].spec.template.metadata.annotations['ipam.spidernet.io/ippool'] = '{"ipv4":["plain-a"]}';
    expect(createReviewer({ pools: indexOf(STANDARD), dualStack: ON })(body).review.response.warnings).toEqual([
      'spiderpool: spec.template.metadata.annotations[ipam.spidernet.io/ippool]: is not read: ipam.spidernet.io/ippools is set too and takes precedence',
      ...TEMPLATE_WARNINGS,
    ]);
  });

  test('the scale subresource is not judged', () => {
    const body = loadReview('deployment-update-mixed-pools');
    body.request['subResource'] = 'scale';
    expect(createReviewer({ pools: indexOf(STANDARD), dualStack: ON })(body).review.response).toEqual({ uid: 'deployment-update', allowed: true });
  });
});

describe('Pods (CREATE)', () => {
  test('a Pod of its own: warned', () => {
    expect(review('pod-create-mixed-pools')).toEqual({
      uid: 'pod-create',
      allowed: true,
      warnings: [
        'spiderpool: every NIC IPv4 (ipam.spidernet.io/ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback',
      ],
    });
  });

  test('a Pod a controller created: not warned (the template was)', () => {
    expect(review('pod-create-controller-owned')).toEqual({ uid: 'pod-create-owned', allowed: true });
  });

  test('a malformed annotation: what Spiderpool refuses at Pod start', () => {
    expect(review('pod-create-malformed-pools')).toEqual({
      uid: 'pod-create-malformed',
      allowed: true,
      warnings: [
        'spiderpool: metadata.annotations[ipam.spidernet.io/ippools]: must be a JSON list of {"interface", "ipv4", "ipv6"} items, not a JSON object; Spiderpool refuses it, so the Pod gets no IP address when it starts',
      ],
    });
  });
});

describe('never a denial, even for an object that cannot be decoded', () => {
  test.each([
    ['a Pod whose annotation is a number', 'pod-create-mixed-pools', (o: any) => (o.metadata.annotations['ipam.spidernet.io/ippool'] = 7)],
    ['a Deployment whose template is a string', 'deployment-create-mixed-pools', (o: any) => (o.spec.template = 'x')],
    ['a Namespace without metadata', 'namespace-update-mixed-defaults', (o: any) => delete o.metadata],
  ])('%s: allowed, with a warning saying so', (_what, name, spoil) => {
    const body = loadReview(name);
    spoil(body.request['object']);
    const response = createReviewer({ pools: indexOf(STANDARD), dualStack: ON })(body).review.response;
    expect(response).toEqual({
      uid: body.request['uid'],
      allowed: true,
      warnings: [expect.stringMatching(/^spiderpool: candidate pools were not checked: cannot decode the object \(.+\)$/)],
    });
  });
});

describe('Namespaces (CREATE, UPDATE)', () => {
  test('default pools that mix categories', () => {
    expect(review('namespace-update-mixed-defaults')).toEqual({
      uid: 'namespace-update',
      allowed: true,
      warnings: [
        'spiderpool: every NIC IPv4 (ipam.spidernet.io/default-ipv4-ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-a, plain-b] are ignored, with no fallback',
      ],
    });
  });

  test('a default that is not a JSON list', () => {
    expect(review('namespace-create-malformed-default').warnings).toEqual([
      'spiderpool: metadata.annotations[ipam.spidernet.io/default-ipv4-ippool]: is not valid JSON; Spiderpool refuses it, so Pods here without their own pool annotation get no IP address when they start',
    ]);
  });
});

describe('without caches: said, not guessed', () => {
  test('no pools known (offline, no --pools)', () => {
    expect(review('deployment-create-mixed-pools', {}).warnings).toEqual([
      'spiderpool: spec.template.metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: no cluster connection, so other SpiderIPPools are not known',
    ]);
  });

  test('pool cache not synced', () => {
    expect(review('deployment-create-mixed-pools', { pools: new PoolIndex(), dualStack: OFF }).warnings).toEqual([
      'spiderpool: spec.template.metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: the SpiderIPPool cache has not synced with the API server yet',
    ]);
  });
});

describe('cluster default SpiderIPPools (spec.default: true), through the pool validator', () => {
  const withDefaults = (extra: Record<string, ReturnType<typeof poolObject>>) => {
    const index = new PoolIndex();
    index.replaceAll([...Object.values(extra)]);
    return index;
  };

  test('a traditional default pool beside IaaS default pools', () => {
    const pools = withDefaults({ a: poolObject('iaas-default', { iaas: true, isDefault: true }) });
    expect(review('pool-create-traditional-default', { pools, dualStack: OFF })).toEqual({
      uid: 'pool-create-default',
      allowed: true,
      warnings: [
        'spiderpool: spec.default: Pod NICs left to the cluster default IPv4 pools: only IaaS pools [iaas-default] will be used; traditional pools [plain-default] are ignored, with no fallback',
      ],
    });
  });

  test('same category, other version, or not a default: no warning', () => {
    for (const other of [
      poolObject('plain-other', { isDefault: true }),
      poolObject('iaas-v6-default', { version: 6, iaas: true, isDefault: true }),
      poolObject('iaas-not-default', { iaas: true, isDefault: false }),
    ]) {
      expect(review('pool-create-traditional-default', { pools: withDefaults({ other }), dualStack: OFF })).toEqual({
        uid: 'pool-create-default',
        allowed: true,
      });
    }
  });

  test('an IaaS default pool beside traditional ones warns too (the IaaS pool wins)', () => {
    const body = loadReview('pool-create-iaas-global');
    body.request['object'].spec.default = true;
    const pools = withDefaults({ p: poolObject('plain-default', { isDefault: true }) });
    const warnings = createReviewer({ pools, dualStack: OFF })(body).review.response.warnings ?? [];
    expect(warnings.filter((w) => w.startsWith('spiderpool: spec.default:'))).toEqual([
      expect.stringMatching(
        /^spiderpool: spec\.default: Pod NICs left to the cluster default IPv4 pools: only IaaS pools \[.+\] will be used; traditional pools \[plain-default\] are ignored, with no fallback$/,
      ),
    ]);
  });
});

describe('a review over its step budget: one warning, whatever else it carries', () => {
  const many = indexOf(Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`p-${i}`, { iaas: i % 2 === 0 }])));
  /** More patterns than one review's steps can try on 2 000 pools. */
  const tooMany = JSON.stringify(Array.from({ length: 100 }, (_, i) => `p-${i}*`));
  const notChecked = (field: string) =>
    `spiderpool: ${field}: candidate pools were not checked: their names and wildcards need more than ${STEPS_PER_REVIEW} steps against 2000 IPv4 pools, this webhook's per-review bound`;

  test('a template with ippools over the budget and ippool beside it', () => {
    const body = loadReview('deployment-create-mixed-pools');
    body.request['object'].spec.template.metadata.annotations = {
      'ipam.spidernet.io/ippools': `[{"interface":"eth0","ipv4":${tooMany}}]`,
      'ipam.spidernet.io/ippool': '{"ipv4":["p-1"]}',
    };
    expect(createReviewer({ pools: many, dualStack: OFF })(body).review.response.warnings).toEqual([
      notChecked('spec.template.metadata.annotations[ipam.spidernet.io/ippools]'),
    ]);
  });

  test('a Namespace whose IPv4 defaults are over the budget and IPv6 defaults are named too', () => {
    const body = loadReview('namespace-update-mixed-defaults');
    body.request['object'].metadata.annotations = {
      'ipam.spidernet.io/default-ipv4-ippool': tooMany,
      'ipam.spidernet.io/default-ipv6-ippool': '["missing-v6"]',
    };
    expect(createReviewer({ pools: many, dualStack: ON })(body).review.response.warnings).toEqual([
      notChecked('metadata.annotations[ipam.spidernet.io/default-ipv4-ippool]'),
    ]);
  });
});
