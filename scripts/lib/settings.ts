// Settings and options of the scripts, checked before anything starts: a bad one is a clear
// message on stderr and exit status 2, with nothing opened.

export class SettingError extends Error {
  override readonly name = 'SettingError';
}

export function portSetting(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new SettingError(`${name} must be a port number (1-65535), not ${raw}`);
  return port;
}

export function positiveIntSetting(name: string, raw: string | undefined): number {
  const n = wholeNumber(raw);
  if (n === null || n < 1) throw new SettingError(`${name} must be a positive integer, not ${raw}`);
  return n;
}

export function nonNegativeIntSetting(name: string, raw: string | undefined): number {
  const n = wholeNumber(raw);
  if (n === null) throw new SettingError(`${name} must be a whole number (0 or more), not ${raw}`);
  return n;
}

/** Digits only, as a safe integer; null otherwise. */
function wholeNumber(raw: string | undefined): number | null {
  const n = Number(raw);
  return raw !== undefined && /^\d+$/.test(raw) && Number.isSafeInteger(n) ? n : null;
}

/** Runs check(); on a SettingError prints it and exits 2 before the script opens anything. */
export function checkSettings<T>(script: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof SettingError)) throw err;
    process.stderr.write(`${script}: ${err.message}\n`);
    process.exit(2);
  }
}
