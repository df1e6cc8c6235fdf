// npm run workflows -- --base-url URL --api-key KEY --api-hash env:NAME [--workflow ID]…
//   or: npm run workflows -- --tenants-file FILE   (the stateful mock's credentials file)
// Runs every Arazzo workflow of spec/workflows/ with `redocly respect` against one base URL and
// prints respect's report and summary. Exit status: respect's (0 when every workflow passed),
// 2 on a usage error. See docs/workflows.md.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runWorkflows } from './respect.ts';

const USAGE = `usage: npm run workflows -- --base-url URL --api-key KEY --api-hash HASH [options]
       npm run workflows -- --tenants-file FILE [options]

Runs the Arazzo workflows of spec/workflows/ with redocly respect against an implementation.

  --base-url URL       the implementation's base URL (every API on it)
  --api-key KEY        a test-environment key with every permission (value or env:NAME)
  --api-hash HASH      its secret (value or env:NAME; env:NAME keeps it out of the shell history)
  --tenants-file FILE  instead: the stateful mock's tenants file (its baseUrl and first tenant)
  --workflow ID        run only this workflowId (repeatable)
  --run-id ID          the run's id (thirdPartyIds, Idempotency-Keys); default a new one
  --json-output FILE   respect's JSON report
  -h, --help           this text`;

class UsageError extends Error {}

function credential(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required (or --tenants-file)`);
  if (!value.startsWith('env:')) return value;
  const fromEnv = process.env[value.slice(4)];
  if (!fromEnv) throw new UsageError(`--${name} names the environment variable ${value.slice(4)}, which is not set`);
  return fromEnv;
}

async function fromTenantsFile(file: string): Promise<{ baseUrl: string; apiKey: string; apiHash: string }> {
  let parsed: { baseUrl?: unknown; tenants?: Array<{ apiKey?: unknown; apiHash?: unknown }> };
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as typeof parsed;
  } catch (err) {
    throw new UsageError(`--tenants-file ${file} cannot be read as JSON: ${(err as Error).message}`);
  }
  const first = parsed.tenants?.[0];
  if (typeof parsed.baseUrl !== 'string' || typeof first?.apiKey !== 'string' || typeof first.apiHash !== 'string') {
    throw new UsageError(`--tenants-file ${file} has no baseUrl or no first tenant with apiKey and apiHash`);
  }
  return { baseUrl: parsed.baseUrl, apiKey: first.apiKey, apiHash: first.apiHash };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      'api-hash': { type: 'string' },
      'tenants-file': { type: 'string' },
      workflow: { type: 'string', multiple: true },
      'run-id': { type: 'string' },
      'json-output': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const file = values['tenants-file'] === undefined ? undefined : await fromTenantsFile(values['tenants-file']);
  const baseUrl = values['base-url'] ?? file?.baseUrl;
  if (baseUrl === undefined) throw new UsageError('--base-url is required (or --tenants-file)');
  if (!/^https?:\/\//.test(baseUrl)) throw new UsageError(`--base-url must be an http(s) URL, not ${baseUrl}`);
  const runId = values['run-id'];
  if (runId !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(runId)) throw new UsageError('--run-id takes 1 to 64 letters, digits, - or _');
  const result = await runWorkflows({
    baseUrl,
    apiKey: file && values['api-key'] === undefined ? file.apiKey : credential(values['api-key'], 'api-key'),
    apiHash: file && values['api-hash'] === undefined ? file.apiHash : credential(values['api-hash'], 'api-hash'),
    ...(values.workflow === undefined ? {} : { workflows: values.workflow }),
    ...(runId === undefined ? {} : { runId }),
    ...(values['json-output'] === undefined ? {} : { jsonOutput: values['json-output'] }),
  });
  console.log(`workflows: run ${result.runId} against ${baseUrl}: ${result.code === 0 ? 'every workflow passed' : `respect exited ${result.code}`}`);
  return result.code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`npm run workflows: ${(err as Error).message}`);
    if (usage) console.error(USAGE);
    process.exit(usage ? 2 : 1);
  },
);
