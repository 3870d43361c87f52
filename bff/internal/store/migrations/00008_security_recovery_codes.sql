-- Security events get their own kind for recovery codes (lookup secrets), so a new set of codes is no longer listed
-- as an authenticator change. Neither engine alters a CHECK constraint in place the same way, so the table is
-- rebuilt, keeping every row.
-- +goose Up
CREATE TABLE security_events_v2 (
    id        TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('password', 'email', 'mobile', 'totp', 'recovery_codes', 'otp_reset')),
    at        BIGINT NOT NULL,
    ip        TEXT NOT NULL DEFAULT ''
);
INSERT INTO security_events_v2 (id, member_id, kind, at, ip) SELECT id, member_id, kind, at, ip FROM security_events;
DROP TABLE security_events;
ALTER TABLE security_events_v2 RENAME TO security_events;
CREATE INDEX security_events_member ON security_events (member_id, at);

-- +goose Down
-- Recovery-code events become authenticator events again (what they were recorded as before).
CREATE TABLE security_events_v1 (
    id        TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('password', 'email', 'mobile', 'totp', 'otp_reset')),
    at        BIGINT NOT NULL,
    ip        TEXT NOT NULL DEFAULT ''
);
INSERT INTO security_events_v1 (id, member_id, kind, at, ip)
    SELECT id, member_id, CASE WHEN kind = 'recovery_codes' THEN 'totp' ELSE kind END, at, ip FROM security_events;
DROP TABLE security_events;
ALTER TABLE security_events_v1 RENAME TO security_events;
CREATE INDEX security_events_member ON security_events (member_id, at);
