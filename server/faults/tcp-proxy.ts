// A TCP proxy on loopback between a server and a PostgreSQL, whose faults are switched at run
// time: what a managed database's network does to its clients.
//   pass       bytes go both ways as they come (also the heal of every fault below)
//   blackhole  connections are accepted and held, no byte crosses either way, nothing is reset:
//              a partition. Bytes are read and kept (so a test sees them arrive); new connections
//              wait unconnected; on heal everything flows on, in order. The proxy's own kernel
//              still answers TCP keepalive probes: a client's deadline, not its keepalive, is
//              what notices this partition (a DROP rule in a network namespace would differ).
//   slow       each chunk waits a random 0.2–2 s (in order) on its way, by default the replies
//   reset()    every open connection is destroyed with an RST, both sides
//   retarget   new connections go to another upstream (a fail-over behind one address); the
//              old ones are reset, or left silent forever: their clients hear nothing again,
//              and their upstream sides are closed, so the old host's open transactions end
//              as a promoted replica's view of them does.
//   cutCommits a fraction of the messages that commit (commit-watch.ts) reach the server, whose
//              answer is then dropped and the connection reset: an outcome the client cannot know.
// Every wait goes through injectable timers; close() leaves no handle open.
import net, { type Socket } from 'node:net';
import { realTimers, type Timers } from '../timers.ts';
import { CommitWatch } from './commit-watch.ts';

export interface ProxyOptions {
  upstreamPort: number;
  upstreamHost?: string;
  timers?: Timers;
  now?: () => number;
  /** In [0, 1): picks the delays and which commits are cut. */
  random?: () => number;
}

export interface SlowOptions {
  minMs?: number;
  maxMs?: number;
  /** Which way the chunks wait: the replies (default), the requests, or both. */
  direction?: 'to-server' | 'to-client' | 'both';
}

export interface ProxyCounts {
  accepted: number;
  upstreamConnects: number;
  /** Connections reset by reset(), retarget(…, 'reset') or a cut commit. */
  reset: number;
  /** Connections left silent forever by retarget(…, 'silent'). */
  silenced: number;
  delayedChunks: number;
  commitsSeen: number;
  commitsCut: number;
  bytesToServer: number;
  bytesToClient: number;
}

export interface FaultProxy {
  readonly port: number;
  readonly counts: Readonly<ProxyCounts>;
  /** Connections open now (held and silent ones included). */
  readonly open: number;
  pass(): void;
  blackhole(): void;
  slow(opts?: SlowOptions): void;
  /** Resets every open connection; returns how many. */
  reset(): number;
  retarget(upstreamPort: number, old: 'reset' | 'silent'): void;
  /** Cuts this fraction (0 stops) of the messages that commit, by a reset before the answer. */
  cutCommits(fraction: number): void;
  close(): Promise<void>;
}

/** One direction of a connection: chunks in order, each released at its time. */
class Lane {
  private readonly queue: Array<{ data: Buffer; at: number; sent?: () => void }> = [];
  private timer: unknown = null;
  private lastAt = 0;

  constructor(
    private readonly env: { timers: Timers; now: () => number },
    private readonly target: () => Socket | null,
    private readonly held: () => boolean,
  ) {}

  push(data: Buffer, delayMs: number, sent?: () => void): void {
    this.lastAt = Math.max(this.lastAt, this.env.now() + delayMs);
    this.queue.push({ data, at: this.lastAt, ...(sent ? { sent } : {}) });
    this.pump();
  }

  pump(): void {
    if (this.timer !== null || this.held()) return;
    const out = this.target();
    while (out && !out.destroyed && this.queue.length > 0) {
      const head = this.queue[0] as { data: Buffer; at: number; sent?: () => void };
      const wait = head.at - this.env.now();
      if (wait > 0) {
        this.timer = this.env.timers.setTimeout(() => {
          this.timer = null;
          this.pump();
        }, wait);
        return;
      }
      this.queue.shift();
      out.write(head.data);
      head.sent?.();
    }
  }

  stop(): void {
    if (this.timer !== null) this.env.timers.clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

interface Link {
  client: Socket;
  upstream: Socket | null;
  /** Left silent by a fail-over: nothing crosses again. */
  silent: boolean;
  /** A commit was sent: the next reply is dropped and the connection reset. */
  cutPending: boolean;
  toServer: Lane;
  toClient: Lane;
  watch: CommitWatch;
}

/** Destroys with an RST where the socket still can; errors after that are expected. */
function rst(s: Socket | null): void {
  if (!s || s.destroyed) return;
  try {
    s.resetAndDestroy();
  } catch {
    s.destroy();
  }
}

export async function startFaultProxy(opts: ProxyOptions): Promise<FaultProxy> {
  const timers = opts.timers ?? realTimers;
  const now = opts.now ?? Date.now;
  const random = opts.random ?? Math.random;
  const host = opts.upstreamHost ?? '127.0.0.1';
  let upstreamPort = opts.upstreamPort;
  let mode: 'pass' | 'blackhole' | 'slow' = 'pass';
  let slowing: Required<SlowOptions> = { minMs: 200, maxMs: 2_000, direction: 'to-client' };
  let cutFraction = 0;
  const links = new Set<Link>();
  const counts: ProxyCounts = { accepted: 0, upstreamConnects: 0, reset: 0, silenced: 0, delayedChunks: 0, commitsSeen: 0, commitsCut: 0, bytesToServer: 0, bytesToClient: 0 };

  const held = (l: Link): boolean => l.silent || mode === 'blackhole';
  const delay = (way: 'to-server' | 'to-client'): number => {
    if (mode !== 'slow' || (slowing.direction !== 'both' && slowing.direction !== way)) return 0;
    counts.delayedChunks++;
    return slowing.minMs + random() * (slowing.maxMs - slowing.minMs);
  };

  const drop = (l: Link): void => {
    l.toServer.stop();
    l.toClient.stop();
    links.delete(l);
  };
  const resetLink = (l: Link): void => {
    counts.reset++;
    rst(l.client);
    rst(l.upstream);
    drop(l);
  };

  const connectUpstream = (l: Link): void => {
    counts.upstreamConnects++;
    const up = net.connect({ host, port: upstreamPort });
    l.upstream = up;
    up.setNoDelay(true);
    up.on('error', () => undefined);
    up.on('data', (chunk: Buffer) => {
      if (l.silent) return;
      if (l.cutPending) {
        // The server answered the commit: the client never hears it.
        counts.commitsCut++;
        resetLink(l);
        return;
      }
      l.watch.fromServer(chunk);
      counts.bytesToClient += chunk.length;
      l.toClient.push(chunk, delay('to-client'));
    });
    up.on('end', () => {
      if (!l.silent) l.client.end();
    });
    up.on('close', (hadError) => {
      if (l.silent || !links.has(l)) return;
      if (hadError) rst(l.client);
      else l.client.destroy();
      drop(l);
    });
    l.toServer.pump();
  };

  const onClient = (client: Socket): void => {
    counts.accepted++;
    client.setNoDelay(true);
    const env = { timers, now };
    const l: Link = {
      client,
      upstream: null,
      silent: false,
      cutPending: false,
      toServer: new Lane(env, () => l.upstream, () => held(l)),
      toClient: new Lane(env, () => l.client, () => held(l)),
      watch: new CommitWatch(),
    };
    links.add(l);
    client.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      if (l.silent) return; // read and dropped: the old host is gone
      counts.bytesToServer += chunk.length;
      let commits = false;
      l.watch.fromClient(chunk, () => {
        counts.commitsSeen++;
        if (random() < cutFraction) commits = true;
      });
      l.toServer.push(chunk, delay('to-server'), commits ? () => (l.cutPending = true) : undefined);
    });
    client.on('end', () => {
      if (!l.silent) l.upstream?.end();
    });
    client.on('close', (hadError) => {
      if (!links.has(l)) return;
      if (!l.silent) {
        if (hadError) rst(l.upstream);
        else l.upstream?.destroy();
      }
      drop(l);
    });
    if (mode !== 'blackhole') connectUpstream(l); // in a partition, the upstream is reached on heal
  };

  const server = net.createServer(onClient);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  const heal = (): void => {
    for (const l of links) {
      if (l.silent) continue;
      if (l.upstream === null) connectUpstream(l);
      l.toServer.pump();
      l.toClient.pump();
    }
  };

  return {
    port,
    counts,
    get open() {
      return links.size;
    },
    pass() {
      mode = 'pass';
      heal();
    },
    blackhole() {
      mode = 'blackhole';
    },
    slow(o = {}) {
      slowing = { minMs: o.minMs ?? 200, maxMs: o.maxMs ?? 2_000, direction: o.direction ?? 'to-client' };
      mode = 'slow';
      heal();
    },
    reset() {
      const n = links.size;
      for (const l of [...links]) resetLink(l);
      return n;
    },
    retarget(next, old) {
      upstreamPort = next;
      for (const l of [...links]) {
        if (old === 'reset') {
          resetLink(l);
          continue;
        }
        if (l.silent) continue;
        counts.silenced++;
        l.silent = true;
        l.toServer.stop();
        l.toClient.stop();
        l.upstream?.destroy();
      }
    },
    cutCommits(fraction) {
      cutFraction = fraction;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const l of [...links]) {
        l.client.destroy();
        l.upstream?.destroy();
        drop(l);
      }
      await closed;
    },
  };
}
