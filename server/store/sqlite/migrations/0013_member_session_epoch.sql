-- 0013_member_session_epoch: the developer portal's sessions are sealed cookies that name the
-- member's session epoch (issue 59). Bumping it ends every session of the member at once:
-- `npm run admin -- member sessions end`, and deactivating the member.
ALTER TABLE members ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;
