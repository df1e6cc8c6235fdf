import { describe, expect, it } from 'vitest';
import { roleOf } from './pg-activity.ts';

describe('PostgreSQL process roles', () => {
  it.each([
    ['postgres: 15/main: checkpointer', 'checkpointer'],
    ['postgres: 15/main: background writer', 'background writer'],
    ['postgres: 15/main: walwriter', 'walwriter'],
    ['postgres: 15/main: autovacuum launcher', 'autovacuum launcher'],
    ['postgres: 15/main: autovacuum worker payments_test_0a1b', 'autovacuum worker'],
    ['postgres: 15/main: postgres payments_test_0a1b 127.0.0.1(51234) idle', 'backend'],
    ['postgres: app orders [local] SELECT', 'backend'],
    ['postgres: 15/main: logical replication launcher', 'other'],
    ['/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main', 'postmaster'],
  ])('%s is %s', (title, role) => {
    expect(roleOf(title)).toBe(role);
  });
});
