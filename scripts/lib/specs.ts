// The contract's documents, in one list that generation, linting, docs and the mock share.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// SPEC_DIR: another copy of spec/ (npm run dev runs the mock on the last copy that passed its checks).
export const SPEC_DIR = process.env.SPEC_DIR ? path.resolve(process.env.SPEC_DIR) : path.join(ROOT, 'spec');
export const GENERATED_DIR = path.join(ROOT, 'generated');

export interface OpenApiDoc {
  /** Name of the API in redocly.yaml and of its generated files. */
  name: 'transactions' | 'orders' | 'management' | 'sandbox';
  file: string;
}

export const OPENAPI_DOCS: readonly OpenApiDoc[] = [
  { name: 'transactions', file: path.join(SPEC_DIR, 'transactions.openapi.yaml') },
  { name: 'orders', file: path.join(SPEC_DIR, 'orders.openapi.yaml') },
  { name: 'management', file: path.join(SPEC_DIR, 'management.openapi.yaml') },
  { name: 'sandbox', file: path.join(SPEC_DIR, 'sandbox.openapi.yaml') },
];

export const ASYNCAPI_DOC = path.join(SPEC_DIR, 'webhooks.asyncapi.yaml');
export const PROBLEM_TYPES = path.join(SPEC_DIR, 'common', 'problem-types.yaml');

/** Environment for every tool we spawn: no telemetry, no update checks. */
export const TOOL_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
  SCARF_ANALYTICS: 'false',
  DO_NOT_TRACK: '1',
};

export const bin = (name: string): string => path.join(ROOT, 'node_modules', '.bin', name);
