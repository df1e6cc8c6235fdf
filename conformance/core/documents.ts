// Where the contract documents the suite checks against are: inside the installed package
// (contract/, copied from generated/ when the package is built; the compiled code runs from
// dist/), or the repository's generated/ when the suite runs from source.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiName } from '../../generated/vocabulary.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DOCUMENTS_DIR = path.basename(here) === 'dist' ? path.resolve(here, '..', 'contract') : path.resolve(here, '..', '..', 'generated');

/** The bundled, dereferenced OpenAPI document of `api`. */
export function loadOpenApi(api: ApiName): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(DOCUMENTS_DIR, 'openapi', `${api}.json`), 'utf8')) as Record<string, unknown>;
}

/** The dereferenced AsyncAPI document of the webhooks. */
export const ASYNCAPI_DOCUMENT = path.join(DOCUMENTS_DIR, 'asyncapi', 'webhooks.json');
