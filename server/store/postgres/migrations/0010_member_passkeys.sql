-- 0010_member_passkeys: the developer portal's passkeys (issue 49). One row per WebAuthn
-- credential; its credential id is unique across tenants, so a credential belongs to one member
-- of one tenant. A member's rows are read by member (the Passkeys page, re-verification) and by
-- credential id (sign-in).
CREATE TABLE member_passkeys (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  member_id     TEXT NOT NULL REFERENCES members (id),
  credential_id TEXT NOT NULL CONSTRAINT member_passkeys_credential_id UNIQUE,
  name          TEXT NOT NULL,
  public_key    TEXT NOT NULL,
  counter       BIGINT NOT NULL CHECK (counter >= 0),
  transports    JSONB NOT NULL,
  multi_device  BOOLEAN NOT NULL,
  backed_up     BOOLEAN NOT NULL,
  created_at    BIGINT NOT NULL,
  last_used_at  BIGINT
);
CREATE INDEX member_passkeys_member ON member_passkeys (member_id);
