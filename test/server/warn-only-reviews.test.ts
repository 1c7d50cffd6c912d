/**
 * The warn-only worker's failure handling, driven directly: answers as the in-process
 * reviewer; a body that takes the worker past its heap kills the worker, not the process,
 * is answered allowed with one warning, and the worker comes back; a review past its
 * deadline, a full queue and a stuck worker are answered the same way. No network.
 */
import { pino } from 'pino';
import { MAX_WARNING_CHARS } from '../../src/kubernetes/field-errors.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import type { ReviewAnswer } from '../../src/server/review-answer.js';
import { WarnOnlyReviews, leadingUid, uncheckedAnswer, type WarnOnlyLimits } from '../../src/server/warn-only-reviews.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { createReviewer } from '../../src/rules/registry.js';
import { indexOf, STANDARD } from '../spiderpool/candidate-pools.js';
import { loadReview } from '../fixtures/load.js';
import { until } from '../helpers/until.js';
import { buildWorkerEntry, type BuiltWorker } from '../helpers/worker-entry.js';

const ON = () => ({ known: true as const, enableIPv6: true });
const POD = WEBHOOKS.pod.path;
let built: BuiltWorker;
const running: WarnOnlyReviews[] = [];

beforeAll(async () => {
  built = await buildWorkerEntry();
}, 60_000);
afterEach(() => Promise.all(running.splice(0).map((reviews) => reviews.stop())));
afterAll(() => built?.remove());

function start(limits: Partial<WarnOnlyLimits> = {}, pools: PoolIndex = indexOf(STANDARD)): WarnOnlyReviews {
  const reviews = new WarnOnlyReviews({ entry: built.entry, pools, dualStack: ON, logger: pino({ level: 'silent' }), limits });
  running.push(reviews);
  return reviews;
}

const submit = (reviews: WarnOnlyReviews, body: Buffer, path = POD): Promise<ReviewAnswer> => new Promise((resolve) => reviews.submit(path, body, resolve));
const podBody = () => Buffer.from(JSON.stringify(loadReview('pod-create-mixed-pools')));
/** A valid Pod CREATE whose parse takes some milliseconds: `count` environment variables. */
function heavyPod(count: number): Buffer {
  const review = loadReview('pod-create-mixed-pools');
  review.request['object'].spec = { containers: [{ name: 'c', env: Array.from({ length: count }, (_, i) => ({ name: `V${i}`, value: 'x' })) }] };
  return Buffer.from(JSON.stringify(review));
}

/** The one warning of an unchecked answer, checked to be one line under the API server's limit. */
function uncheckedWarning(answer: ReviewAnswer): string {
  expect(answer.type).toBe('review');
  const response = JSON.parse((answer as { json: string }).json).response;
  expect(response).toMatchObject({ uid: 'pod-create', allowed: true });
  expect(response.warnings).toHaveLength(1);
  const warning: string = response.warnings[0];
  expect(warning.length).toBeLessThan(MAX_WARNING_CHARS);
  expect(warning).not.toMatch(/[\n\r]/);
  return warning;
}

describe('WarnOnlyReviews', () => {
  test('answers as the in-process reviewer, the pools mirrored', async () => {
    const pools = indexOf(STANDARD);
    const reviews = start({}, pools);
    const answer = await submit(reviews, podBody());
    const expected = createReviewer({ pools, dualStack: ON })(loadReview('pod-create-mixed-pools'));
    expect(answer).toMatchObject({ type: 'review', allowed: true, operation: 'CREATE' });
    expect(JSON.parse((answer as { json: string }).json)).toEqual(expected.review);
    expect(await submit(reviews, Buffer.from('{"request":'))).toEqual({ type: 'refuse', code: 400, message: 'request body is not valid JSON' });
  });

  test('a body past the heap kills the worker, not the process: allowed with a warning, and the worker comes back', async () => {
    const pools = indexOf(STANDARD);
    const reviews = start({ heapMb: 16, restartMinMs: 50, answerMs: 20_000, stuckMs: 60_000 }, pools); // the heap, not a deadline, decides
    // Within the JSON shape bounds (under 1 Mi tokens), past a 16 MiB heap once parsed.
    const big = Buffer.from(`{"request":{"uid":"pod-create"},"x":[${Array.from({ length: 240_000 }, (_, i) => `{"k${i}":[${i}]}`).join(',')}]}`);
    expect(uncheckedWarning(await submit(reviews, big))).toMatch(/ran out of its 16 MiB heap; it restarts/);
    const checked = JSON.stringify(createReviewer({ pools, dualStack: ON })(loadReview('pod-create-mixed-pools')).review);
    await until(async () => {
      const answer = await submit(reviews, podBody());
      return answer.type === 'review' && answer.json === checked;
    }, 'a review checked by the new worker');
    expect(reviews.starts).toBe(2);
  });

  test('a review past its deadline is answered allowed, unchecked', async () => {
    const reviews = start({ answerMs: 1 });
    expect(uncheckedWarning(await submit(reviews, heavyPod(200_000)))).toMatch(/no answer within 1 ms/);
  });

  test('over the queue bound: answered at once, unchecked', async () => {
    const reviews = start({ maxQueued: 1 });
    const answers = await Promise.all([submit(reviews, heavyPod(50_000)), submit(reviews, podBody()), submit(reviews, podBody())]);
    expect(uncheckedWarning(answers[1]!)).toMatch(/1 reviews \(\d+ bytes\) are queued/);
    expect(uncheckedWarning(answers[2]!)).toMatch(/are queued/);
  });

  test('a worker that does not answer past the stuck bound is replaced', async () => {
    const reviews = start({ answerMs: 5, stuckMs: 20, restartMinMs: 10 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => submit(reviews, heavyPod(100_000))));
    for (const answer of answers) expect(answer).toMatchObject({ type: 'review', allowed: true });
    await until(() => reviews.starts >= 2, 'the stuck worker replaced');
  });

  test('the uid is read without parsing; the unchecked answer names the field', () => {
    expect(leadingUid(podBody())).toBe('pod-create');
    expect(leadingUid(Buffer.from('not json'))).toBe('');
    expect(JSON.parse((uncheckedAnswer('u', WEBHOOKS.workload.path, 'why') as { json: string }).json).response.warnings).toEqual([
      'spiderpool: spec.template.metadata.annotations[ipam.spidernet.io/ippools]: candidate pools were not checked: why; the write is allowed',
    ]);
  });
});
