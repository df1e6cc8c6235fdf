// Developer portal: the only script besides the @simplewebauthn/browser bundle (webauthn.js).
// Every page but the passkey ceremonies works without it; it adds copy buttons, live
// "Last test" updates, in-place "Load 5 more" and runs the passkey ceremonies. It never builds markup from strings:
// text goes in through textContent, server HTML only through DOMParser of our own pages.
(function () {
  'use strict';

  var SYMBOLS = { queued: '◷', sending: '↻', retrying: '↺', delivered: '✓', failed: '✕', disabled: '⊘' };
  var LABELS = { queued: 'Queued', sending: 'Sending', retrying: 'Retrying', delivered: 'Delivered', failed: 'Failed', disabled: 'Disabled' };
  var TONES = { queued: 'pending', sending: 'pending', retrying: 'pending', delivered: 'delivered', failed: 'failed', disabled: 'disabled' };
  var FINAL = { delivered: true, failed: true, disabled: true };

  // ---- copy buttons ---------------------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'visually-hidden';
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand('copy');
      document.body.removeChild(area);
      if (ok) resolve();
      else reject(new Error('copy refused'));
    });
  }

  function setupCopy(button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var source = document.getElementById(button.getAttribute('data-copy-target'));
      var status = document.getElementById(button.getAttribute('data-copy-status'));
      if (!source) return;
      copyText(source.textContent.trim()).then(
        function () {
          button.setAttribute('data-copied', 'true');
          button.textContent = 'Copied';
          if (status) status.textContent = 'Copied to the clipboard.';
        },
        function () {
          var range = document.createRange();
          range.selectNodeContents(source);
          var selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          if (status) status.textContent = 'Copying was blocked: the secret is selected, press Ctrl+C (⌘C).';
        },
      );
    });
  }

  // ---- Last test ------------------------------------------------------------------------
  function paintBadge(badge, progress) {
    badge.setAttribute('data-progress', progress);
    badge.className = 'badge badge--' + TONES[progress];
    var symbol = badge.querySelector('.badge__symbol');
    var label = badge.querySelector('.badge__label');
    if (symbol) symbol.textContent = SYMBOLS[progress];
    if (label) label.textContent = LABELS[progress];
  }

  // Rows of the newest activity page that are on screen are swapped for fresh ones, so the
  // activity agrees with Last test; rows loaded with "Load 5 more" stay where they are.
  function refreshActivityRows() {
    var rows = document.getElementById('activity-rows');
    if (!rows) return;
    fetch('/portal/webhooks/activity', { credentials: 'same-origin', headers: { accept: 'text/html' }, cache: 'no-store' })
      .then(function (res) {
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var fresh = doc.querySelectorAll('#activity-rows > tr[data-delivery]');
        var current = rows.querySelectorAll('tr[data-delivery]');
        if (current.length === 0) {
          while (rows.firstChild) rows.removeChild(rows.firstChild);
          for (var i = 0; i < fresh.length; i++) rows.appendChild(document.importNode(fresh[i], true));
          return;
        }
        for (var j = 0; j < fresh.length; j++) {
          var id = fresh[j].getAttribute('data-delivery');
          for (var k = 0; k < current.length; k++) {
            if (current[k].getAttribute('data-delivery') === id) rows.replaceChild(document.importNode(fresh[j], true), current[k]);
          }
        }
      })
      .catch(function () {});
  }

  function setupLastTest(box) {
    var url = box.getAttribute('data-poll');
    var started = Date.now();
    function schedule() {
      var progress = box.getAttribute('data-progress');
      if (!progress || FINAL[progress]) return;
      var elapsed = Date.now() - started;
      if (elapsed > 10 * 60 * 1000) return;
      setTimeout(poll, elapsed < 30 * 1000 ? 700 : 3000);
    }
    function poll() {
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' }, cache: 'no-store' })
        .then(function (res) {
          return res.ok ? res.json() : null;
        })
        .then(function (body) {
          var test = body && body.lastTest;
          if (test && SYMBOLS[test.progress]) {
            var changed = box.getAttribute('data-progress') !== test.progress;
            box.setAttribute('data-progress', test.progress);
            var badge = box.querySelector('.badge');
            if (badge) paintBadge(badge, test.progress);
            var when = box.querySelector('[data-last-test-at]');
            if (when && test.atText) {
              when.textContent = test.atText;
              if (when.tagName === 'TIME') when.setAttribute('datetime', test.at);
            }
            var link = box.querySelector('[data-last-test-link]');
            if (link && test.href) link.setAttribute('href', test.href);
            var live = box.querySelector('[data-last-test-live]');
            if (live && changed) live.textContent = 'Last test: ' + LABELS[test.progress];
            if (changed) refreshActivityRows();
          }
          schedule();
        })
        .catch(schedule);
    }
    schedule();
  }

  // ---- Load 5 more ----------------------------------------------------------------------
  function setupLoadMore(link) {
    link.addEventListener('click', function (event) {
      var rows = document.getElementById('activity-rows');
      if (!rows) return;
      event.preventDefault();
      link.setAttribute('aria-disabled', 'true');
      link.textContent = 'Loading…';
      fetch(link.getAttribute('href'), { credentials: 'same-origin', headers: { accept: 'text/html' }, cache: 'no-store' })
        .then(function (res) {
          if (!res.ok) throw new Error('HTTP ' + res.status);
          return res.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, 'text/html');
          var newRows = doc.querySelectorAll('#activity-rows > tr[data-delivery]');
          for (var i = 0; i < newRows.length; i++) rows.appendChild(document.importNode(newRows[i], true));
          var next = doc.querySelector('[data-load-more]');
          var status = document.getElementById('activity-status');
          if (status) status.textContent = newRows.length + ' more deliveries loaded.';
          if (next) {
            link.setAttribute('href', next.getAttribute('href'));
            link.removeAttribute('aria-disabled');
            link.textContent = 'Load 5 more';
          } else {
            var end = document.createElement('span');
            end.className = 'muted small';
            end.textContent = 'No older deliveries.';
            link.parentNode.replaceChild(end, link);
          }
        })
        .catch(function () {
          // Fall back to the plain link: a full page of older deliveries.
          window.location.href = link.getAttribute('href');
        });
    });
  }

  // ---- passkeys: fetch the options, run the browser's ceremony, post its answer with the form --
  function setupWebAuthn(button) {
    var browser = window.SimpleWebAuthnBrowser;
    var form = button.form;
    var status = form.querySelector('[data-webauthn-status]');
    var say = function (text) {
      if (status) status.textContent = text;
    };
    if (!browser || !browser.browserSupportsWebAuthn()) {
      say('This browser cannot use passkeys.');
      return;
    }
    button.hidden = false;
    var kind = button.getAttribute('data-webauthn');
    button.addEventListener('click', function () {
      button.disabled = true;
      say('Waiting for your passkey…');
      var body = new URLSearchParams();
      body.set('_csrf', form.elements._csrf.value);
      fetch(button.getAttribute('data-options'), { method: 'POST', body: body, credentials: 'same-origin' })
        .then(function (res) {
          return res.json().then(function (json) {
            if (!res.ok) throw new Error(json.detail || 'The portal refused to start.');
            return json;
          });
        })
        .then(function (options) {
          return kind === 'register' ? browser.startRegistration({ optionsJSON: options }) : browser.startAuthentication({ optionsJSON: options });
        })
        .then(function (credential) {
          var field = form.elements.credential;
          field.disabled = false;
          field.value = JSON.stringify(credential);
          if (button.getAttribute('data-action')) form.setAttribute('action', button.getAttribute('data-action'));
          say('Checking…');
          form.submit();
        })
        .catch(function (err) {
          button.disabled = false;
          // NotAllowedError: the member cancelled or the authenticator timed out.
          say(err && err.name === 'NotAllowedError' ? 'Cancelled. Nothing was changed.' : (err && err.message) || 'The passkey did not work.');
        });
    });
  }

  function init() {
    var passkeyButtons = document.querySelectorAll('[data-webauthn]');
    for (var j = 0; j < passkeyButtons.length; j++) setupWebAuthn(passkeyButtons[j]);
    var copies = document.querySelectorAll('[data-copy-target]');
    for (var i = 0; i < copies.length; i++) setupCopy(copies[i]);
    var lastTest = document.querySelector('[data-last-test][data-poll]');
    if (lastTest) setupLastTest(lastTest);
    var more = document.querySelector('[data-load-more]');
    if (more) setupLoadMore(more);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
