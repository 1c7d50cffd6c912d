import { describe, expect, it } from '@jest/globals';
import { actionsOf, enforcementArgs, EnforcementError, parseEnforcement } from '../../src/rules/enforcement-table.js';
import { REFUSAL_RULES } from '../../src/rules/rule-names.js';

describe('--enforcement', () => {
  it('sets every rule with ACTION and one rule with RULE=ACTION, in any case; Deny by default', () => {
    expect(parseEnforcement([])).toEqual({ default: 'Deny', rules: {} });
    const table = parseEnforcement(['audit', 'mode-fixed=DENY', 'conf-yml=Warn']);
    expect(table).toEqual({ default: 'Audit', rules: { 'mode-fixed': 'Deny', 'conf-yml': 'Warn' } });
    const actionOf = actionsOf(table);
    expect(REFUSAL_RULES.map(actionOf).filter((a) => a !== 'Audit')).toEqual(['Deny', 'Warn']);
    expect(parseEnforcement(enforcementArgs(table))).toEqual(table);
    expect(parseEnforcement(['pair-ipVersion=warn', 'pair-ipVersion=Warn'])).toEqual({ default: 'Deny', rules: { 'pair-ipVersion': 'Warn' } });
  });

  it.each([
    ['mode-fixd=Warn', 'no rule is named "mode-fixd"; did you mean mode-fixed?'],
    ['Pair-IPVersion=Warn', 'no rule is named "Pair-IPVersion"; did you mean pair-ipVersion?'],
    ['nothing-like-it=Warn', `no rule is named "nothing-like-it"; rules: ${REFUSAL_RULES.join(', ')}`],
    ['Dryrun', '"Dryrun": the action must be Deny, Warn, Audit (any case), alone or after RULE='],
    ['mode-fixed=', '"mode-fixed=": the action must be Deny, Warn, Audit (any case), alone or after RULE='],
  ])('%s: one line saying what is wrong and what to give', (value, message) => {
    expect(() => parseEnforcement([value])).toThrow(new EnforcementError(message));
  });

  it('refuses a rule or the default given two different actions', () => {
    expect(() => parseEnforcement(['Warn', 'Audit'])).toThrow('the default action is already Warn, not Audit; give it once');
    expect(() => parseEnforcement(['conf-yml=Warn', 'conf-yml=Deny'])).toThrow('rule conf-yml is already Warn, not Deny; give it once');
  });

  it('answers a huge or control-laden name on one bounded line', () => {
    const message = (() => {
      try {
        parseEnforcement([`${'x'.repeat(1_000_000)}\n=Warn`]);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(message).not.toMatch(/\n/);
    expect(message.length).toBeLessThan(2_000);
  });
});
