import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTargetRegistry } from '../targets.ts';
import type { Check } from './check.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, runCli } from './cli.ts';
import { TargetRegistry, UsageError, plannedTarget } from './target.ts';
import type { Target } from './target.ts';

const SECRET = 'whsec_Y2xpLXRlc3RzLW9ubHktc2VjcmV0LW9mLTMyLWJ5dGVzIQ';
const dir = mkdtempSync(join(tmpdir(), 'conformance-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[], registry = createTargetRegistry(), tty = false) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, registry, {
    stdout: { write: (s: string) => (stdout += s), isTTY: tty, columns: 80 },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr };
}

/** A target whose checks are given: to test the CLI and the runner without a network. */
function fakeTarget(statuses: Array<'passed' | 'failed' | 'skipped' | 'not_implemented'>, seen: number[] = []): Target {
  return {
    name: 'fake',
    summary: 'a fake target',
    implemented: true,
    synopsis: 'fake [--flag]',
    options: { flag: { type: 'boolean', description: 'a flag' } },
    async prepare(values, ctx) {
      if (values.flag) throw new UsageError('--flag is refused');
      seen.push(ctx.seed);
      const checks: Check[] = statuses.map((status, i) => ({
        id: `fake.check-${i}`,
        title: `check ${i}`,
        target: 'fake',
        group: i % 2 === 0 ? 'even' : 'odd',
        rules: [{ source: 'fake.yaml#/rule' }],
        async run() {
          if (status === 'failed') return { status, failure: { message: 'broken', rule: { source: 'fake.yaml#/rule' }, exchanges: [] } };
          if (status === 'skipped') return { status, reason: 'not applicable' };
          if (status === 'not_implemented') return { status };
          return { status };
        },
      }));
      return { checks, notes: ['a note'] };
    },
  };
}

describe('payments-conformance CLI', () => {
  it('prints the targets and exits 2 without arguments, 0 with --help', async () => {
    const none = await cli([]);
    expect(none.code).toBe(EXIT_USAGE);
    expect(none.stderr).toMatch(/Usage: payments-conformance <target>/);
    const help = await cli(['--help']);
    expect(help.code).toBe(EXIT_OK);
    expect(help.stdout).toMatch(/receiver\s+replays signed events/);
    expect(help.stdout).toMatch(/^  api\s/m);
    expect(help.stdout).toMatch(/^  sender\s/m);
    expect(help.stdout).toMatch(/--report KIND=FILE/);
  });

  it('answers "not implemented yet" with exit 2 for a planned target, and lists it as such', async () => {
    const registry = new TargetRegistry([plannedTarget('api', 'the APIs'), plannedTarget('sender', 'the sender')]);
    for (const target of ['api', 'sender']) {
      const run = await cli([target, '--base-url', 'http://127.0.0.1:1'], registry);
      expect(run.code).toBe(EXIT_USAGE);
      expect(run.stderr).toContain(`payments-conformance ${target}: not implemented yet`);
    }
    expect((await cli(['--help'], registry)).stdout).toMatch(/api\s+the APIs \(not implemented yet\)/);
  });

  it('has help per target', async () => {
    const run = await cli(['receiver', '--help']);
    expect(run.code).toBe(EXIT_OK);
    for (const flag of ['--url URL', '--secret S', '--previous-secret P', '--timeout-ms N', '--seed N', '--report KIND=FILE', '--quiet']) {
      expect(run.stdout).toContain(flag);
    }
  });

  it('exits 2 on usage errors, naming the problem', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['nope'], /unknown target "nope"/],
      [['receiver', '--secret', SECRET], /--url is required/],
      [['receiver', '--url', 'http://127.0.0.1:1/'], /--secret is required/],
      [['receiver', '--url', 'not a url', '--secret', SECRET], /--url is not an absolute URL/],
      [['receiver', '--url', 'ftp://127.0.0.1/', '--secret', SECRET], /http or https/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', 'whsec_short'], /shorter than 32 bytes/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', 'env:CONFORMANCE_TEST_UNSET_VARIABLE'], /not set/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--seed', '-1'], /--seed/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--seed', 'abc'], /--seed/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--report', 'html=x'], /junit=FILE or json=FILE/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--timeout-ms', '0'], /--timeout-ms/],
      [['receiver', '--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--bogus'], /bogus/],
      [['receiver', 'positional'], /positional/],
    ];
    for (const [argv, message] of cases) {
      const run = await cli(argv);
      expect(run.code, argv.join(' ')).toBe(EXIT_USAGE);
      expect(run.stderr, argv.join(' ')).toMatch(message);
    }
    // The secret never appears in messages.
    const run = await cli(['receiver', '--url', 'x', '--secret', SECRET]);
    expect(run.stderr).not.toContain(SECRET);
  });

  it('exits 0 when nothing failed (skipped and not implemented do not fail a run)', async () => {
    const seeds: number[] = [];
    const registry = new TargetRegistry([fakeTarget(['passed', 'skipped', 'not_implemented'], seeds)]);
    const run = await cli(['fake', '--seed', '77'], registry);
    expect(run.code).toBe(EXIT_OK);
    expect(seeds).toEqual([77]);
    expect(run.stdout).toContain('seed 77 (repeat this run with --seed 77)');
    expect(run.stdout).toContain('note: a note');
    expect(run.stdout).toMatch(/PASS fake\.check-0/);
    expect(run.stdout).toMatch(/SKIP fake\.check-1  check 1: not applicable/);
    expect(run.stdout).toMatch(/TODO fake\.check-2/);
  });

  it('exits 1 when a check failed, and writes every requested report', async () => {
    const registry = new TargetRegistry([fakeTarget(['passed', 'failed'])]);
    const json = join(dir, 'nested', 'report.json');
    const junit = join(dir, 'report.xml');
    const run = await cli(['fake', '--seed', '5', '--report', `json=${json}`, '--report', `junit=${junit}`], registry);
    expect(run.code).toBe(EXIT_FAILED);
    expect(run.stdout).toMatch(/FAIL fake\.check-1/);
    expect(run.stdout).toMatch(/why:\s+broken/);
    expect(run.stdout).toMatch(/1 of 2 checks failed/);
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ seed: 5, passed: false, totals: { failed: 1, passed: 1 } });
    expect(readFileSync(junit, 'utf8')).toContain('<failure message="broken"');
  });

  it('chooses a random seed when none is given, and prints it', async () => {
    const seeds: number[] = [];
    const run = await cli(['fake'], new TargetRegistry([fakeTarget(['passed'], seeds)]));
    expect(run.code).toBe(EXIT_OK);
    expect(run.stdout).toContain(`seed ${seeds[0]}`);
  });

  it('passes a target\'s own usage errors through as exit 2', async () => {
    const run = await cli(['fake', '--flag'], new TargetRegistry([fakeTarget([])]));
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain('--flag is refused');
  });

  it('--quiet prints failures and the summary only', async () => {
    const run = await cli(['fake', '--quiet', '--seed', '1'], new TargetRegistry([fakeTarget(['passed', 'failed'])]));
    expect(run.stdout).not.toMatch(/PASS fake\.check-0/);
    expect(run.stdout).toMatch(/FAIL fake\.check-1/);
    expect(run.stdout).toMatch(/^group\s+passed/m);
  });

  it('shows a live progress line on a terminal, and plain lines otherwise', async () => {
    const registry = new TargetRegistry([fakeTarget(['passed', 'passed'])]);
    const tty = await cli(['fake', '--seed', '1'], registry, true);
    expect(tty.stdout).toContain('\r\x1b[2K');
    expect(tty.stdout).toMatch(/\[1\/2\] even › check 0/);
    const plain = await cli(['fake', '--seed', '1'], registry, false);
    expect(plain.stdout).not.toContain('\x1b');
    expect(plain.stdout).not.toContain('\r');
  });

  it('lets a planned target be replaced by its implementation', async () => {
    const registry = new TargetRegistry([plannedTarget('fake', 'planned')]);
    expect((await cli(['fake'], registry)).code).toBe(EXIT_USAGE);
    registry.register(fakeTarget(['passed']));
    expect((await cli(['fake', '--seed', '1'], registry)).code).toBe(EXIT_OK);
  });
});
