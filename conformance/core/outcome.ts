// The outcomes a check returns, with their notes: every target builds them the same way.
import type { CheckOutcome, Exchange, SpecRule } from './check.ts';

export function fail(message: string, rule: SpecRule, exchanges: Exchange[], notes?: string[]): CheckOutcome {
  return { status: 'failed', failure: { message, rule, exchanges }, ...(notes && notes.length > 0 ? { notes } : {}) };
}

export function pass(notes?: string[]): CheckOutcome {
  return { status: 'passed', ...(notes && notes.length > 0 ? { notes } : {}) };
}

export function skip(reason: string, notes?: string[]): CheckOutcome {
  return { status: 'skipped', reason, ...(notes && notes.length > 0 ? { notes } : {}) };
}
