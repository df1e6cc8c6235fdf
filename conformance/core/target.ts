// What a conformance target (`receiver`, `api`, `sender`) provides to the CLI: its options,
// its help, and a `prepare` step that validates the options and builds the list of checks.
import type { Check } from './check.ts';
import type { CatalogueEntry } from './coverage.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** May be given several times (values collected in order). */
  multiple?: boolean;
  /** Placeholder shown in the help, for example `URL` or `N`. */
  value?: string;
  description: string;
  /** Shown in the help; the target applies its defaults itself. */
  defaultText?: string;
}

export type OptionValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

export interface PrepareContext {
  seed: number;
  quiet: boolean;
}

export interface PreparedRun {
  checks: Check[];
  /** Printed before the run and kept in the reports. */
  notes?: string[];
  /** The rules in the target's scope, for the coverage summary. */
  catalogue?: readonly CatalogueEntry[];
  /**
   * The first contact with the implementation, before the first check (reading the sandbox
   * wallet); its notes join `notes`. `prepare` itself sends nothing, so the coverage map can
   * be read from a prepared run that never starts.
   */
  start?: () => Promise<string[]>;
  /** Releases what `prepare` opened (servers, connections). */
  close?: () => Promise<void>;
}

export interface Target {
  name: string;
  /** One line for the target list. */
  summary: string;
  /** False: the CLI answers "not implemented yet" and exits 2. */
  implemented: boolean;
  /** Synopsis after the tool name, for example `receiver --url URL --secret S [options]`. */
  synopsis: string;
  /** Paragraphs printed in `--help` after the synopsis. */
  description?: string;
  options: Record<string, OptionSpec>;
  /** Validates the options (throw `UsageError` for a bad one) and builds the checks. */
  prepare(values: OptionValues, ctx: PrepareContext): Promise<PreparedRun>;
}

/** A bad command line: the CLI prints the message and a hint, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A registered target that is not built yet. */
export function plannedTarget(name: string, summary: string, synopsis = `${name} [options]`): Target {
  return {
    name,
    summary,
    implemented: false,
    synopsis,
    options: {},
    async prepare() {
      throw new UsageError(`the ${name} target is not implemented yet`);
    },
  };
}

export class TargetRegistry {
  readonly #targets = new Map<string, Target>();

  constructor(targets: readonly Target[] = []) {
    for (const t of targets) this.register(t);
  }

  /** Adds a target, or replaces one of the same name (a planned target by its implementation). */
  register(target: Target): this {
    if (!/^[a-z][a-z0-9-]*$/.test(target.name)) throw new Error(`invalid target name: ${target.name}`);
    this.#targets.set(target.name, target);
    return this;
  }

  get(name: string): Target | undefined {
    return this.#targets.get(name);
  }

  list(): Target[] {
    return [...this.#targets.values()];
  }
}

// ---- helpers for targets' prepare() ---------------------------------------------------

export function requiredString(values: OptionValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function optionalString(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} needs a value`);
  return v;
}

export function integerOption(values: OptionValues, name: string, fallback: number, min: number, max: number): number {
  const v = values[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
  const n = Number(v);
  if (n < min || n > max) throw new UsageError(`--${name} must be from ${min} to ${max}`);
  return n;
}

/** An absolute http(s) URL without credentials or fragment. */
export function urlOption(values: OptionValues, name: string, required: true): URL;
export function urlOption(values: OptionValues, name: string, required: false): URL | undefined;
export function urlOption(values: OptionValues, name: string, required: boolean): URL | undefined {
  const raw = required ? requiredString(values, name) : optionalString(values, name);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--${name} is not an absolute URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--${name} must be an http or https URL`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`--${name} must not carry credentials`);
  if (url.hash !== '') throw new UsageError(`--${name} must not have a fragment`);
  return url;
}
