// The receiver target against the round-four broken receivers (mutants/receivers/round-four.ts):
// each must fail exactly the checks meant for its defect, with the rule they enforce.
import { describe, expect, it } from 'vitest';
import { ROUND_FOUR_RECEIVERS } from './mutants/receivers/round-four.ts';
import { idsWith, runTarget } from './testing/run.ts';

const SECRET = 'whsec_Y29uZm9ybWFuY2UtcmVjZWl2ZXItY3VycmVudC1zZWNyZXQ';
const PREVIOUS_SECRET = 'whsec_Y29uZm9ybWFuY2UtcmVjZWl2ZXItcHJldmlvdXMtc2VjcmV0';

describe('receiver target against the round-four broken receivers', () => {
  for (const mutant of ROUND_FOUR_RECEIVERS) {
    it(`fails ${mutant.name} (${mutant.defect}) by ${mutant.catchers.join(', ')}`, async () => {
      const secrets = mutant.withPreviousSecret ? [SECRET, PREVIOUS_SECRET] : [SECRET];
      const receiver = await mutant.start({ secrets });
      try {
        const previous = mutant.withPreviousSecret ? ['--previous-secret', PREVIOUS_SECRET] : [];
        const run = await runTarget(['receiver', '--url', receiver.url, '--secret', SECRET, ...previous, '--seed', '20261122', '--quiet']);
        expect(run.exitCode).toBe(1);
        expect(idsWith(run.report, 'failed').sort(), run.output).toEqual([...mutant.catchers].sort());
        for (const id of mutant.catchers) {
          const check = run.report.checks.find((c) => c.id === id);
          expect(check?.failure?.rule.source, id).toMatch(/payments-service-interface\.md § Webhook signatures, verification rule [1-8]|webhooks\.asyncapi\.yaml#/);
          expect(check?.failure?.exchanges.length, id).toBeGreaterThan(0);
        }
      } finally {
        await receiver.close();
      }
    });
  }
});
