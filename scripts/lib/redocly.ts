// @redocly/openapi-core in this process (the library openapi-typescript builds on), with the
// repository's redocly.yaml: the loop's lint and generation's bundles cost no process start-up.
import path from 'node:path';
import { loadConfig, type Config } from '@redocly/openapi-core';
import { ROOT } from './specs.ts';

let config: Promise<Config> | undefined;

export function redoclyConfig(): Promise<Config> {
  config ??= loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
  return config;
}
