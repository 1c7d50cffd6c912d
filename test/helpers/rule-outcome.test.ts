import { ruleOutcome } from './rule-outcome.js';

const CAUSE = 'spec.nodeName: Forbidden: ';
const refused = { status: 422, body: `{"message":"… ${CAUSE}changing spec.nodeName …"}`, warnings: [] };
const warned = { status: 200, body: '{}', warnings: [`299 - "${CAUSE}changing spec.nodeName …"`] };
const audited = { status: 200, body: '{}', warnings: [] };

describe('ruleOutcome', () => {
  it('counts each answer as the action it shows when that action is due', () => {
    expect(ruleOutcome(refused, CAUSE, ['Deny'], false)).toBe('refused');
    expect(ruleOutcome(warned, CAUSE, ['Warn'], false)).toBe('warned');
    expect(ruleOutcome(audited, CAUSE, ['Audit'], false)).toBe('audited');
    expect(ruleOutcome(warned, CAUSE, ['Warn', 'Deny'], false)).toBe('warned');
    expect(ruleOutcome(refused, CAUSE, ['Warn', 'Deny'], false)).toBe('refused');
  });

  it('fails a refusal where only Warn or Audit were due, and a write let through where Deny was', () => {
    expect(ruleOutcome(refused, CAUSE, ['Audit', 'Warn'], false)).toBe('failed');
    expect(ruleOutcome(warned, CAUSE, ['Deny'], false)).toBe('failed');
    expect(ruleOutcome(audited, CAUSE, ['Deny'], false)).toBe('failed');
  });

  it('tells Warn from Audit by the warning naming the cause', () => {
    expect(ruleOutcome(audited, CAUSE, ['Warn'], false)).toBe('failed');
    expect(ruleOutcome(warned, CAUSE, ['Audit'], false)).toBe('failed');
    const otherWarning = { ...audited, warnings: ['299 - "metadata.annotations[ipam.spidernet.io/ippools]: …"'] };
    expect(ruleOutcome(otherWarning, CAUSE, ['Audit'], false)).toBe('audited');
    expect(ruleOutcome(otherWarning, CAUSE, ['Warn'], false)).toBe('failed');
  });

  it('fails a 500, a timeout status and a refusal for another cause, whatever is due', () => {
    const failedCalling = { status: 500, body: 'failed calling webhook "spiderippool.iaas-webhook.spidernet.io"', warnings: [] };
    const otherCause = { status: 422, body: 'spec.ips: Invalid value', warnings: [] };
    for (const answer of [failedCalling, { ...failedCalling, status: 504 }, otherCause]) {
      expect(ruleOutcome(answer, CAUSE, ['Deny', 'Warn', 'Audit'], true)).toBe('failed');
    }
  });

  it('counts a write let through without the warning as unguarded only when allowed to, and only where Audit is not due', () => {
    expect(ruleOutcome(audited, CAUSE, ['Deny'], true)).toBe('unguarded');
    expect(ruleOutcome(audited, CAUSE, ['Audit'], true)).toBe('audited');
    expect(ruleOutcome(warned, CAUSE, ['Deny'], true)).toBe('failed');
  });
});
