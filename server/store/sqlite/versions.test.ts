import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { EXTERNAL_CHECK_MS, TransactionVersions } from './versions.ts';

describe('TransactionVersions, on a fake clock', () => {
  const dirs: string[] = [];
  const open: Database.Database[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** The writer's connection and another process's (a second connection to the same file). */
  function twoConnections(): { writer: Database.Database; outsider: Database.Database } {
    const dir = mkdtempSync(join(tmpdir(), 'versions-'));
    dirs.push(dir);
    const writer = new Database(join(dir, 'db.sqlite'));
    writer.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    const outsider = new Database(join(dir, 'db.sqlite'));
    open.push(writer, outsider);
    return { writer, outsider };
  }

  it('moves with this process’s commits at once, per environment', () => {
    const { writer } = twoConnections();
    const versions = new TransactionVersions(writer, () => 0);
    expect(versions.of('env_a')).toBe('0.0');
    versions.committed(['env_a']);
    expect(versions.of('env_a')).toBe('0.1');
    expect(versions.of('env_b')).toBe('0.0');
  });

  it('sees another process’s commit at the first look EXTERNAL_CHECK_MS after the last, not before', () => {
    const { writer, outsider } = twoConnections();
    let now = 1_000;
    const versions = new TransactionVersions(writer, () => now);
    outsider.prepare('UPDATE t SET x = x + 1').run();
    now += EXTERNAL_CHECK_MS - 1;
    expect(versions.of('env_a')).toBe('0.0'); // not asked yet
    now += 1;
    expect(versions.of('env_a')).toBe('1.0'); // every environment's version moves
    expect(versions.of('env_b')).toBe('1.0');
  });

  it('does not move for a statement of another process that committed nothing', () => {
    const { writer, outsider } = twoConnections();
    let now = 0;
    const versions = new TransactionVersions(writer, () => now);
    outsider.prepare('UPDATE t SET x = x WHERE x < 0').run(); // no row: no commit to the file
    now += EXTERNAL_CHECK_MS;
    expect(versions.of('env_a')).toBe('0.0');
    outsider.prepare('UPDATE t SET x = x + 1').run();
    now += EXTERNAL_CHECK_MS;
    expect(versions.of('env_a')).toBe('1.0');
    now += EXTERNAL_CHECK_MS;
    expect(versions.of('env_a')).toBe('1.0'); // once per commit
  });
});
