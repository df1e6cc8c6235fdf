// Credentials on the command line of the api and sender targets: given as the value itself or
// as env:NAME (read from the environment variable NAME, which keeps it out of the shell
// history), or as file:PATH (the first line of a file, e.g. the callback secret a sender run
// saved). Never printed.
import { readFileSync } from 'node:fs';
import { UsageError, optionalString } from './target.ts';
import type { OptionValues } from './target.ts';

export function credentialOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: true): string;
export function credentialOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: false): string | undefined;
export function credentialOption(values: OptionValues, name: string, env: NodeJS.ProcessEnv, required: boolean): string | undefined {
  const value = optionalString(values, name);
  if (value === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  if (value.startsWith('file:')) {
    // A secret a previous run saved (sender --save-callback-secret): the file's first line.
    try {
      return readFileSync(value.slice(5), 'utf8').split(/\r?\n/)[0] ?? '';
    } catch {
      throw new UsageError(`--${name} names the file ${value.slice(5)}, which cannot be read`);
    }
  }
  if (!value.startsWith('env:')) return value;
  const variable = value.slice(4);
  const fromEnv = env[variable];
  if (!fromEnv) throw new UsageError(`--${name} names the environment variable ${variable}, which is not set`);
  return fromEnv;
}
