// Pages that only say something (not found, refused, failed), as responses.
import type { Context } from 'hono';
import type { PageStatus } from './render.ts';
import { page } from './render.ts';
import type { Viewer } from './session.ts';
import type { Chrome } from './views/layout.tsx';
import { MessagePage } from './views/message.tsx';

export function chromeFor(viewer: Viewer | undefined, title: string): Chrome {
  if (!viewer) return { title };
  return {
    title,
    viewer: {
      email: viewer.email,
      role: viewer.role,
      environment: viewer.scope.environment,
      csrf: viewer.session.csrf,
      canManage: viewer.canManage,
    },
  };
}

export interface Message {
  heading: string;
  detail: string;
  tone?: 'info' | 'warning' | 'error';
  requestId?: string;
  back?: { href: string; label: string };
}

export function messageResponse(c: Context, viewer: Viewer | undefined, m: Message, status: PageStatus): Promise<Response> {
  return page(
    c,
    <MessagePage
      chrome={chromeFor(viewer, m.heading)}
      tone={m.tone ?? 'warning'}
      heading={m.heading}
      detail={m.detail}
      requestId={m.requestId}
      back={m.back}
    />,
    status,
  );
}
