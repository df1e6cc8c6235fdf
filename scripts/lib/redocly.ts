// @redocly/openapi-core in this process (the library openapi-typescript builds on), with the
// repository's redocly.yaml: the loop's lint and generation's bundles cost no process start-up.
import path from 'node:path';
import { bundle, loadConfig, type Config } from '@redocly/openapi-core';
import { ROOT } from './specs.ts';

let config: Promise<Config> | undefined;

export function redoclyConfig(): Promise<Config> {
  config ??= loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
  return config;
}

/**
 * An OpenAPI document as one JSON value, bundled in this process (a redocly CLI process costs a
 * second or more of start-up per document); `dereference` inlines every `$ref`. Throws with the
 * bundler's errors, named by `label`.
 */
export async function bundleOpenApi(file: string, dereference: boolean, label = file): Promise<Record<string, unknown>> {
  const { bundle: bundled, problems } = await bundle({ ref: file, config: await redoclyConfig(), dereference });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) throw new Error(`bundling ${label} failed:\n${errors.map((p) => `  ${p.message} (${p.location[0]?.pointer ?? ''})`).join('\n')}`);
  return JSON.parse(JSON.stringify(bundled.parsed)) as Record<string, unknown>;
}
