// What the loop tells the designer (the terminal) and whoever started it over an IPC channel
// (the benchmark and the tests wait for these events instead of parsing the terminal).
export type DevEvent =
  | { type: 'ready'; serverUrl: string; mockUrl: string }
  | { type: 'change-served'; files: string[]; ms: number }
  /** After a served change's spec:diff: the loop is idle again. */
  | { type: 'change-done'; files: string[] }
  | { type: 'change-refused'; files: string[]; errors: string[] }
  | { type: 'typecheck'; errors: number }
  | { type: 'stopped' };

const useColour = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const paint = (code: number, text: string): string => (useColour ? `\x1b[${code}m${text}\x1b[0m` : text);
export const green = (t: string): string => paint(32, t);
export const red = (t: string): string => paint(31, t);
export const yellow = (t: string): string => paint(33, t);
export const dim = (t: string): string => paint(2, t);

const stamp = (): string => dim(new Date().toISOString().slice(11, 23));

export function info(message: string): void {
  process.stdout.write(`${stamp()} ${message}\n`);
}

export function ok(step: string, ms: number, detail = ''): void {
  info(`${green('✔')} ${step} ${dim(`${Math.round(ms)} ms`)}${detail === '' ? '' : ` ${detail}`}`);
}

export function skipped(step: string, why: string): void {
  info(`${dim('·')} ${step}: ${dim(why)}`);
}

export function failed(step: string, lines: readonly string[]): void {
  info(`${red('✖')} ${step}`);
  for (const line of lines) process.stdout.write(`    ${line}\n`);
}

export function emit(event: DevEvent): void {
  if (process.send && process.connected) process.send({ dev: event });
}

/** Runs a step and prints how long it took. */
export async function timed<T>(step: string, work: () => Promise<T>, detail: (value: T) => string = () => ''): Promise<T> {
  const started = performance.now();
  const value = await work();
  ok(step, performance.now() - started, detail(value));
  return value;
}
