// The installed `payments-webhooks` command, as a merchant uses it from a folder holding only
// the installed tarball (check-packages.ts): --help runs; `listen --forward-to` delivers a
// `trigger order.paid` to a receiver of a few lines on the installed verifyWebhook, which
// accepts it with the secret listen printed; after listen is killed and started again, the
// next event arrives and none is lost (the killed run's last event may come again: at least
// once, judged by event id); Ctrl-C ends it with exit 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { until } from '../../testing/until.ts';

// Verifies each forward with the secret in secret.txt (written once listen printed it) and
// prints one JSON line per request.
const LISTEN_RECEIVER = `import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { verifyWebhook } from 'payments-webhooks';

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const secret = readFileSync('secret.txt', 'utf8');
    const { event, eventId } = verifyWebhook({ rawBody: Buffer.concat(chunks), headers: req.headers, secrets: secret });
    console.log(JSON.stringify({ verified: eventId, type: event.type }));
    res.writeHead(200).end();
  } catch (err) {
    console.log(JSON.stringify({ refused: String(err) }));
    res.writeHead(400).end();
  }
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
`;

export interface Line {
  port?: number;
  verified?: string;
  type?: string;
  refused?: string;
}

/** A child's output, line by line, with a wait for the first line that matches. */
function lines(child: ChildProcess): { all: string[]; next(match: (line: string) => boolean, what: string, timeoutMs?: number): Promise<string> } {
  const all: string[] = [];
  const waiters = new Set<(line: string) => void>();
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      all.push(line);
      for (const w of waiters) w(line);
    });
  }
  return {
    all,
    next(match, what, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const found = all.find(match);
        if (found !== undefined) return resolve(found);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; output so far:\n${all.join('\n')}`));
        }, timeoutMs);
        const check = (line: string): void => {
          if (!match(line)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(line);
        };
        waiters.add(check);
      });
    },
  };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export async function checkListen(dir: string, env: NodeJS.ProcessEnv, server: { url: string; merchant: { apiKey: string; apiSecret: string } }): Promise<boolean> {
  // The bin the install linked, run directly: a kill reaches the command itself.
  const bin = path.join(dir, 'node_modules', '.bin', 'payments-webhooks');
  const cliEnv = { ...env, PAYMENTS_API_KEY: server.merchant.apiKey, PAYMENTS_API_SECRET: server.merchant.apiSecret, PAYMENTS_BASE_URL: server.url };
  const command = (args: string[]): ChildProcess => spawn(bin, args, { cwd: dir, env: cliEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const children: ChildProcess[] = [];
  try {
    const help = command(['--help']);
    const helpOut = lines(help);
    if ((await exitOf(help)) !== 0 || !helpOut.all.some((l) => l.includes('payments-webhooks listen --forward-to'))) {
      console.log(`payments-webhooks --help failed:\n${helpOut.all.join('\n')}`);
      return false;
    }
    console.log('payments-webhooks --help runs from the installed bin');

    await writeFile(path.join(dir, 'listen-receiver.js'), LISTEN_RECEIVER);
    const receiver = spawn('node', ['listen-receiver.js'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(receiver);
    const received = lines(receiver);
    const parsed = (): Line[] => received.all.map((l) => JSON.parse(l) as Line);
    const port = (JSON.parse(await received.next((l) => l.includes('port'), 'the receiver')) as Line).port;
    const listenArgs = ['listen', '--forward-to', `http://127.0.0.1:${port}/webhooks`, '--state', path.join(dir, 'listen-state.json')];

    const startListen = async (): Promise<ChildProcess> => {
      const listen = command(listenArgs);
      children.push(listen);
      const line = await lines(listen).next((l) => l.includes('signing secret is'), 'listen to be ready');
      await writeFile(path.join(dir, 'secret.txt'), /whsec_[A-Za-z0-9_-]+/.exec(line)![0]);
      return listen;
    };
    /** Runs trigger; resolves with when it started. */
    const trigger = async (event: string): Promise<number> => {
      const started = performance.now();
      const t = command(['trigger', event]);
      const out = lines(t);
      if ((await exitOf(t)) !== 0) throw new Error(`trigger ${event} failed:\n${out.all.join('\n')}`);
      return started;
    };
    const first = await startListen();
    const triggered = await trigger('order.paid');
    await received.next((l) => l.includes('"order.paid"'), 'the first order.paid at the receiver');
    const ms = Math.round(performance.now() - triggered);
    console.log(`payments-webhooks listen delivered a triggered order.paid, verified with the printed secret, ${ms} ms after trigger started (its own start-up included)`);

    // Killed as soon as the receiver has the event: listen may not have saved its cursor past
    // it yet, and then the next run forwards it again. At-least-once allows that; a loss does not.
    const firstSession = received.all.length;
    first.kill('SIGKILL');
    await exitOf(first);
    await trigger('order.paid');
    const second = await startListen();
    await until(() => distinctPaid(parsed()) >= 2, () => `the event of the restart at the receiver; received:\n${received.all.join('\n')}`, 15_000);
    second.kill('SIGINT');
    const stopped = await exitOf(second);
    const verdict = judgeListenRun(parsed(), firstSession);
    const ok = stopped === 0 && verdict.ok;
    console.log(
      ok
        ? `payments-webhooks listen resumed after a kill: the next events arrived, none lost${verdict.redelivered > 0 ? ` (${verdict.redelivered} forwarded again after the kill, as at-least-once allows)` : ''}; Ctrl-C exited 0`
        : `payments-webhooks listen FAILED: exit ${stopped}, ${verdict.ok ? 'received as expected' : verdict.why}; received ${JSON.stringify(parsed())}`,
    );
    return ok;
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function distinctPaid(received: Line[]): number {
  return new Set(received.filter((l) => l.type === 'order.paid').map((l) => l.verified)).size;
}

const EXPECTED_TYPES = 'order.created,order.paid,order.created,order.paid';

/**
 * The receiver's lines of the whole run (the first `firstSession` of them printed before the
 * kill), judged by event id: each of the two triggers' events
 * arrived once at least, in order, none refused, and a repeat is only an event of the killed
 * session (its cursor may not have been saved past it), never one the second session had
 * already forwarded.
 */
export function judgeListenRun(received: Line[], firstSession: number): { ok: true; redelivered: number } | { ok: false; why: string } {
  const refused = received.filter((l) => l.refused);
  if (refused.length > 0) return { ok: false, why: `${refused.length} forward(s) refused by the receiver` };
  const verified = received.filter((l): l is Line & { verified: string } => typeof l.verified === 'string');
  const firstIds = new Set(received.slice(0, firstSession).map((l) => l.verified));
  const seen = new Map<string, string | undefined>();
  let redelivered = 0;
  for (const line of verified) {
    if (!seen.has(line.verified)) {
      seen.set(line.verified, line.type);
      continue;
    }
    if (!firstIds.has(line.verified)) return { ok: false, why: `${line.verified} forwarded twice by the session after the restart` };
    redelivered += 1;
  }
  const types = [...seen.values()].join();
  if (types !== EXPECTED_TYPES) return { ok: false, why: `events in first-arrival order were ${types}, expected ${EXPECTED_TYPES}` };
  return { ok: true, redelivered };
}
