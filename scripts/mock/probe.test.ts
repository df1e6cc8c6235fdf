// The contract probe (probe.ts) against the mock: every operation, every documented status and
// named example through `Prefer`, every generated invalid request, under five Accept values:
// no divergence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCEPTS, ask, divergences, probeCases } from './probe.ts';
import { startMock, type RunningMock } from './start.ts';

let mock: RunningMock;
const logged: string[] = [];

beforeAll(async () => {
  mock = await startMock({ port: 0, refusals: (line) => logged.push(line) });
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

describe('Prefer: dynamic=true', () => {
  it('never answers a body its schema refuses: every operation, 50 times', async () => {
    const cases = probeCases().filter((c) => c.name === 'default');
    const found: string[] = [];
    for (const c of cases) {
      const dynamic = { ...c, prefer: 'dynamic=true' };
      for (let i = 0; i < 50; i++) {
        const answer = await ask(mock.url, dynamic, null);
        found.push(...divergences(dynamic, null, answer, answer));
      }
    }
    const examples = logged.filter((l) => l.includes('answered the documented example')).length;
    console.log(`dynamic=true: ${cases.length} operations x 50 answers, ${found.length} invalid, ${examples} answered with the documented example (no valid body generated)`);
    expect(found).toEqual([]);
  }, 900_000);
});
