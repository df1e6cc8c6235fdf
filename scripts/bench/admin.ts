// A tenant through the admin tool, for runs whose data folder printed no demo tenant.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { childEntry } from '../../server/testing/server-bundle.ts';
import { ROOT } from '../lib/specs.ts';
import type { DemoTenant } from './lib.ts';

export async function createTenantViaAdmin(env: NodeJS.ProcessEnv): Promise<DemoTenant> {
  // The bench's bundle of the admin tool when it built one (bench:api), else tsx's loader.
  const { stdout } = await promisify(execFile)(process.execPath, [...childEntry('server/admin/cli.ts'), 'tenant', 'create', '--name', 'Bench'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout) as DemoTenant;
}
