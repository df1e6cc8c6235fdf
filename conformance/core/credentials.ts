// Credentials on the command line of the api and sender targets: given as the value itself or
// as env:NAME (read from the environment variable NAME, which keeps it out of the shell
// history). Never printed.
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
  if (!value.startsWith('env:')) return value;
  const variable = value.slice(4);
  const fromEnv = env[variable];
  if (!fromEnv) throw new UsageError(`--${name} names the environment variable ${variable}, which is not set`);
  return fromEnv;
}
