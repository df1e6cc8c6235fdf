// The one retry rule of startServer and spawnMock (withFreePort): a port taken between
// freePort() and the child's listen (by another test's process) costs a second start on another
// port, never the test.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { until } from '../../testing/until.ts';
import { freePort, startServer, withFreePort } from './child-server.ts';
import { sinkFile } from './secret-sink.ts';

const holders: Server[] = [];
afterAll(() => holders.forEach((h) => h.close()));

/** A port something else listens on, as another test's server would. */
async function takenPort(): Promise<number> {
  const holder = createServer();
  holders.push(holder);
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return (holder.address() as { port: number }).port;
}

it('starts again on another port when the first was taken before the child bound it, the first output kept', async () => {
  const taken = await takenPort();
  const offered: number[] = [];
  const server = await startServer({
    port: async () => {
      const port = offered.length === 0 ? taken : await freePort();
      offered.push(port);
      return port;
    },
  });
  try {
    expect(offered).toHaveLength(2);
    expect(server.url).toBe(`http://127.0.0.1:${offered[1]}`);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // The demo tenant of the folder's first start, printed before the taken port failed it, or by the second.
    expect(server.tenant?.apiKey).toBeTruthy();
  } finally {
    await server.stop();
  }
}, 120_000);

it('gives up after three taken ports, naming the cause', async () => {
  const taken = await takenPort();
  let tries = 0;
  await expect(
    startServer({
      port: async () => {
        tries++;
        return taken;
      },
    }),
  ).rejects.toThrow(/cannot listen: .*EADDRINUSE/);
  expect(tries).toBe(3);
}, 120_000);

it('kills a child that was not ready by the deadline', async () => {
  const failure = await startServer({ readyTimeoutMs: 1 }).then(
    () => null,
    (err: Error & { pid?: number }) => err,
  );
  expect(failure?.message).toMatch(/was not ready within/);
  const pid = failure?.pid;
  expect(pid).toBeGreaterThan(0);
  const alive = (): boolean => {
    try {
      process.kill(pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until(() => !alive(), `child ${pid} to be gone`);
});

it('withFreePort: another port only for a taken one; any other failure at once', async () => {
  const ports = [1, 2, 3, 4];
  const port = async (): Promise<number> => ports.shift()!;
  const tried: number[] = [];
  const start = async (p: number): Promise<number> => {
    tried.push(p);
    if (p < 3) throw new Error('taken');
    return p;
  };
  expect(await withFreePort(start, (err) => (err as Error).message === 'taken', { port })).toBe(3);
  expect(tried).toEqual([1, 2, 3]);

  const other = new Error('broken');
  await expect(withFreePort(() => Promise.reject(other), () => false, { port: async () => 5 })).rejects.toBe(other);
});

it("puts a child's stderr, not only its stdout, into the run's secrets sink", async () => {
  const sink = sinkFile();
  expect(sink).not.toBeNull();
  const marker = `stderr-marker-${process.hrtime.bigint()}`;
  const server = await startServer({ nodeArgs: ['--import', `data:text/javascript,process.stderr.write(${JSON.stringify(`${marker}\n`)})`] });
  const pid = server.child.pid;
  await server.stop();
  await until(() => readFileSync(sink!, 'utf8').includes(`--- child server ${pid} stderr\n${marker}`), `the sink to hold child ${pid}'s stderr`);
}, 120_000);
