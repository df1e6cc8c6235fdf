// A tenant through the admin tool, for runs whose data folder printed no demo tenant.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { ROOT, bin } from '../lib/specs.ts';
import type { DemoTenant } from './lib.ts';

export async function createTenantViaAdmin(env: NodeJS.ProcessEnv): Promise<DemoTenant> {
  const { stdout } = await promisify(execFile)(bin('tsx'), [path.join(ROOT, 'server', 'admin', 'cli.ts'), 'tenant', 'create', '--name', 'Bench'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout) as DemoTenant;
}
