// Small pieces the pages share: the delivery state badge (a symbol and a word, never colour
// alone), times, notices.
import type { Child } from 'hono/jsx';
import type { DeliveryProgress as Progress } from '../../domain/deliveries/progress.ts';
import type { AttemptErrorClass, AttemptRecord, DeliveryKind } from '../../domain/model.ts';

const PROGRESS: Record<Progress, { symbol: string; label: string; tone: string; hint: string }> = {
  queued: { symbol: '◷', label: 'Queued', tone: 'pending', hint: 'Pending: waiting for its first attempt.' },
  sending: { symbol: '↻', label: 'Sending', tone: 'pending', hint: 'Pending: an attempt is in flight.' },
  retrying: { symbol: '↺', label: 'Retrying', tone: 'pending', hint: 'Pending: an attempt failed; the next one is scheduled.' },
  delivered: { symbol: '✓', label: 'Delivered', tone: 'delivered', hint: 'The endpoint answered 2xx (and only that).' },
  failed: { symbol: '✕', label: 'Failed', tone: 'failed', hint: 'Ten attempts without a 2xx answer. Can be retried.' },
  disabled: { symbol: '⊘', label: 'Disabled', tone: 'disabled', hint: 'The endpoint was disabled or changed before delivery; never sent.' },
};

export function StateBadge(props: { progress: Progress; id?: string; large?: boolean }) {
  const p = PROGRESS[props.progress];
  return (
    <span class={`badge badge--${p.tone}${props.large ? ' badge--large' : ''}`} title={p.hint} data-progress={props.progress} id={props.id}>
      <span class="badge__symbol" aria-hidden="true">
        {p.symbol}
      </span>
      <span class="badge__label">{p.label}</span>
    </span>
  );
}

export function progressLabel(progress: Progress): string {
  return PROGRESS[progress].label;
}

/** A UTC timestamp, readable and machine-readable. */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

export function Time(props: { at: number | null; empty?: string }) {
  if (props.at === null) return <span class="muted">{props.empty ?? '—'}</span>;
  return <time datetime={new Date(props.at).toISOString()}>{formatTime(props.at)}</time>;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function Notice(props: { tone: 'info' | 'success' | 'warning' | 'error'; title?: string; children?: Child; testId?: string }) {
  const symbol = { info: 'ℹ', success: '✓', warning: '!', error: '✕' }[props.tone];
  return (
    <div class={`notice notice--${props.tone}`} role={props.tone === 'error' ? 'alert' : 'status'} data-testid={props.testId}>
      <span class="notice__symbol" aria-hidden="true">
        {symbol}
      </span>
      <div class="notice__body">
        {props.title ? <p class="notice__title">{props.title}</p> : null}
        {props.children}
      </div>
    </div>
  );
}

export function Breadcrumbs(props: { items: Array<{ href?: string; label: string }> }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumb">
      <ol>
        {props.items.map((item) => (
          <li>{item.href ? <a href={item.href}>{item.label}</a> : <span aria-current="page">{item.label}</span>}</li>
        ))}
      </ol>
    </nav>
  );
}

const ERROR_CLASS: Record<AttemptErrorClass, string> = {
  timeout: 'Timed out (10 s)',
  connection_refused: 'Connection refused',
  connection_reset: 'Connection reset',
  dns_failure: 'DNS lookup failed',
  tls_error: 'TLS error',
  destination_not_allowed: 'Destination not allowed',
  network_error: 'Network error',
};

/** What the receiver answered: an HTTP status, or the class of network error. */
export function Answer(props: { attempt: AttemptRecord }) {
  const a = props.attempt;
  const text = a.outcome === 'response' ? `HTTP ${a.statusCode ?? '?'}` : a.errorClass ? ERROR_CLASS[a.errorClass] : 'Network error';
  return (
    <span class={a.success ? 'answer-ok' : 'answer-bad'}>
      <span aria-hidden="true">{a.success ? '✓ ' : '✕ '}</span>
      {text}
    </span>
  );
}

export const KIND_LABEL: Record<DeliveryKind, string> = {
  order_event: 'Order event',
  webhook_test: 'Test webhook',
  payout_callback: 'Payout callback',
};

export function shortId(id: string, keep = 12): string {
  return id.length > keep + 1 ? `${id.slice(0, keep)}…` : id;
}
