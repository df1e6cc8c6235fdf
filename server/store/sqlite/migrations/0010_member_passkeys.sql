-- 0010_member_passkeys: the developer portal's passkeys (issue 49). One row per WebAuthn
-- credential; its credential id is unique across tenants, so a credential belongs to one member
-- of one tenant. A member's rows are read by member (the Passkeys page, re-verification) and by
-- credential id (sign-in).
CREATE TABLE member_passkeys (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  member_id     TEXT NOT NULL REFERENCES members (id),
  credential_id TEXT NOT NULL UNIQUE,
  name          TEXT NOT NULL,
  public_key    TEXT NOT NULL,
  counter       INTEGER NOT NULL CHECK (counter >= 0),
  transports    TEXT NOT NULL,
  multi_device  INTEGER NOT NULL CHECK (multi_device IN (0, 1)),
  backed_up     INTEGER NOT NULL CHECK (backed_up IN (0, 1)),
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER
) STRICT;
CREATE INDEX member_passkeys_member ON member_passkeys (member_id);
