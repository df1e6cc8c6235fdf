// The contract probe (probe.ts) against the mock: every operation, every documented status and
// named example through `Prefer`, every generated invalid request, under five Accept values:
// no divergence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCEPTS, ask, divergences, probeCases } from './probe.ts';
import { startMock, type RunningMock } from './start.ts';

let mock: RunningMock;

beforeAll(async () => {
  mock = await startMock({ port: 0 });
}, 60_000);

afterAll(() => mock?.close());

describe('the mock under any Accept', () => {
  it('answers every probe case as the contract documents, the same for every Accept', async () => {
    const cases = probeCases();
    const found: string[] = [];
    let asked = 0;
    for (const c of cases) {
      const withoutAccept = await ask(mock.url, c, null);
      for (const accept of ACCEPTS) {
        const answer = accept === null ? withoutAccept : await ask(mock.url, c, accept);
        found.push(...divergences(c, accept, answer, withoutAccept));
        asked += 1;
      }
    }
    console.log(`contract probe: ${cases.length} cases x ${ACCEPTS.length} Accept values = ${asked} answers, ${found.length} divergences`);
    expect(found).toEqual([]);
  }, 300_000);
});
