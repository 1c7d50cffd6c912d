/** One field Path (apimachinery's Child/Index/Key) and one reading of a zod issue: every message spells a field the same way. */
import { z } from 'zod';
import { firstIssue } from '../../src/kubernetes/field-issue.js';
import { Path, pathOf } from '../../src/kubernetes/field-path.js';
import { annotationField } from '../../src/spiderpool/pool.js';
import { stringEntries } from '../../src/kubernetes/containers.js';

describe('Path', () => {
  it('renders as apimachinery String() does: children with dots, indexes and keys in brackets', () => {
    expect(Path.of('spec', 'nodeName').index(0).toString()).toBe('spec.nodeName[0]');
    expect(Path.of('metadata').child('annotations').key('ipam.spidernet.io/pair-pool').toString()).toBe('metadata.annotations[ipam.spidernet.io/pair-pool]');
    expect(Path.ROOT.toString()).toBe('');
    expect(Path.ROOT.index(2).toString()).toBe('[2]');
  });

  it('escapes and bounds a key from the request, so a message stays one line', () => {
    expect(Path.of('data').key('a\nb').toString()).toBe('data[a\\nb]');
    expect(Path.of('data').key('k'.repeat(5000)).toString().length).toBeLessThan(400);
  });

  it('reads a decoder path: numbers as indexes, identifiers as children, other keys as keys', () => {
    expect(pathOf(['spec', 'nodeName', 3]).toString()).toBe('spec.nodeName[3]');
    expect(pathOf(['metadata', 'annotations', 'ipam.spidernet.io/ippool'], Path.of('request', 'object')).toString()).toBe(
      'request.object.metadata.annotations[ipam.spidernet.io/ippool]',
    );
  });

  it('spells a decode error and a rule error of one field the same way', () => {
    const schema = z.object({ metadata: z.object({ annotations: stringEntries(['ipam.spidernet.io/pair-pool']) }) });
    const result = schema.safeParse({ metadata: { annotations: { 'ipam.spidernet.io/pair-pool': 5 } } });
    expect(result.success).toBe(false);
    const decoded = firstIssue(result.error!);
    expect(decoded.startsWith(`${annotationField('ipam.spidernet.io/pair-pool')}: `)).toBe(true);
  });
});

describe('firstIssue', () => {
  it('is `<path>: <message>` under the given path, the message alone at the root', () => {
    const error = z.object({ a: z.array(z.string()) }).safeParse({ a: ['x', 1] }).error!;
    expect(firstIssue(error)).toBe('a[1]: must be a string, not a number');
    expect(firstIssue(error, Path.of('request', 'object'))).toBe('request.object.a[1]: must be a string, not a number');
    expect(firstIssue(z.string().safeParse(1).error!)).toBe('must be a string, not a number');
  });

  it('names a JSON number past a double range apart from the number it must be', () => {
    const huge = JSON.parse(`{"n":4${'0'.repeat(400)}}`) as unknown;
    expect(firstIssue(z.object({ n: z.number() }).safeParse(huge).error!)).toBe('n: must be a number, not an out-of-range number');
    expect(firstIssue(z.object({ n: z.number() }).safeParse({ n: Number.NaN }).error!)).toBe('n: must be a number, not a NaN');
    expect(z.object({ n: z.number() }).safeParse({ n: 4 }).success).toBe(true);
  });
});
