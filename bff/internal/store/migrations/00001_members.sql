-- Members: one row per Kratos identity, created on first sight. Times are Unix microseconds.
-- +goose Up
CREATE TABLE members (
    id                    TEXT PRIMARY KEY,
    created_at            BIGINT NOT NULL,
    nickname              TEXT NOT NULL DEFAULT '',
    locale                TEXT NOT NULL DEFAULT '',
    referral_code         TEXT NOT NULL UNIQUE,
    referred_by           TEXT REFERENCES members (id),
    last_login_at         BIGINT,
    last_login_ip         TEXT NOT NULL DEFAULT '',
    last_login_session    TEXT NOT NULL DEFAULT '',
    prev_login_at         BIGINT,
    prev_login_ip         TEXT NOT NULL DEFAULT '',
    withdraw_locked_until BIGINT
);
CREATE INDEX members_referred_by ON members (referred_by);

CREATE TABLE security_events (
    id        TEXT PRIMARY KEY,
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('password', 'email', 'mobile', 'totp', 'otp_reset')),
    at        BIGINT NOT NULL,
    ip        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX security_events_member ON security_events (member_id, at);

-- +goose Down
DROP TABLE security_events;
DROP TABLE members;
