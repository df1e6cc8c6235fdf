// The page frame: header with the environment switch and the member, the main column and
// the footer that states what the member's role may do. No inline script or style anywhere
// (the Content-Security-Policy forbids them): behaviour lives in /portal/assets/portal.js,
// looks in /portal/assets/portal.css.
import type { Child } from 'hono/jsx';
import { ENVIRONMENT_NAMES, type EnvironmentName, type MemberRole } from '../../domain/model.ts';

export const ASSET_VERSION = '2';

export interface Chrome {
  title: string;
  /** Absent on the signed-out pages. */
  viewer?: { email: string; role: MemberRole; environment: EnvironmentName; csrf: string; canManage: boolean };
}

export function CsrfField(props: { token: string }) {
  return <input type="hidden" name="_csrf" value={props.token} />;
}

function EnvironmentSwitch(props: { environment: EnvironmentName; csrf: string }) {
  return (
    <form method="post" action="/portal/environment" class="env-switch" aria-label="Environment">
      <CsrfField token={props.csrf} />
      {ENVIRONMENT_NAMES.map((env) => (
        <button
          type="submit"
          name="environment"
          value={env}
          class={`env-switch__option env-switch__option--${env}`}
          aria-pressed={props.environment === env ? 'true' : 'false'}
          data-testid={`env-${env}`}
        >
          {env === 'test' ? 'Test' : 'Live'}
        </button>
      ))}
    </form>
  );
}

const ROLE_LABEL: Record<MemberRole, string> = { administrator: 'Administrator', developer: 'Developer', viewer: 'Viewer' };

export function Layout(props: Chrome & { children?: Child }) {
  const v = props.viewer;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · Developer portal`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={`/portal/assets/portal.css?v=${ASSET_VERSION}`} />
        <script src={`/portal/assets/webauthn.js?v=${ASSET_VERSION}`} defer></script>
        <script src={`/portal/assets/portal.js?v=${ASSET_VERSION}`} defer></script>
      </head>
      <body class={v ? `env-${v.environment}` : 'signed-out'}>
        <header class="topbar">
          <div class="topbar__inner">
            <a class="brand" href="/portal/webhooks">
              <span class="brand__mark" aria-hidden="true">
                ◆
              </span>
              <span class="brand__name">Payments</span>
              <span class="brand__sub">Developer portal</span>
            </a>
            {v ? (
              <div class="topbar__tools">
                <EnvironmentSwitch environment={v.environment} csrf={v.csrf} />
                <div class="member">
                  <a class="member__email" href="/portal/account/passkeys" title="Passkeys" data-testid="account-passkeys">
                    {v.email}
                  </a>
                  <span class={`role role--${v.role}`}>{ROLE_LABEL[v.role]}</span>
                </div>
                <form method="post" action="/portal/sign-out" class="sign-out">
                  <CsrfField token={v.csrf} />
                  <button type="submit" class="button button--quiet button--small">
                    Sign out
                  </button>
                </form>
              </div>
            ) : null}
          </div>
          {v?.environment === 'live' ? (
            <div class="live-banner" role="note">
              <span aria-hidden="true">●</span> Live environment: changes here affect real orders and payouts.
            </div>
          ) : null}
        </header>
        <main class="page" id="main">
          {props.children}
        </main>
        <footer class="footer">
          <div class="footer__inner">
            {v ? (
              v.canManage ? (
                <p>
                  As {v.role === 'administrator' ? 'an administrator' : 'a developer'} you can manage the webhooks of this workspace. Viewers see the
                  webhook activity read-only.
                </p>
              ) : (
                <p data-testid="read-only-note">
                  You are signed in as a viewer: you can read the webhook configuration and activity, but not change them. Only active administrators
                  and developers manage webhooks; ask one of them for changes.
                </p>
              )
            ) : (
              <p>Sign in with the member token your workspace administrator gave you.</p>
            )}
            <p class="footer__small">Each environment (test, live) has its own webhook endpoint and signing secret.</p>
          </div>
        </footer>
      </body>
    </html>
  );
}
