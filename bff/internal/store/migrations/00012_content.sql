-- Public content the operator publishes: events, banners (the home carousel and the events page's banner) and
-- announcements. One row per item and language (en, ja); a reader in another language falls back to the item's
-- English row. Times are Unix microseconds; position orders items within a list (lower first).
-- +goose Up
CREATE TABLE content_events (
    id         TEXT NOT NULL,
    lang       TEXT NOT NULL CHECK (lang IN ('en', 'ja')),
    title      TEXT NOT NULL,
    summary    TEXT NOT NULL DEFAULT '',
    image_url  TEXT NOT NULL DEFAULT '',
    body       TEXT NOT NULL DEFAULT '',
    starts_at  BIGINT NOT NULL,
    ends_at    BIGINT,
    published  BOOLEAN NOT NULL DEFAULT FALSE,
    position   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (id, lang)
);
CREATE INDEX content_events_list ON content_events (lang, published, position);

CREATE TABLE content_banners (
    id         TEXT NOT NULL,
    lang       TEXT NOT NULL CHECK (lang IN ('en', 'ja')),
    place      TEXT NOT NULL CHECK (place IN ('home', 'events')),
    title      TEXT NOT NULL,
    image_url  TEXT NOT NULL,
    link       TEXT NOT NULL DEFAULT '',
    starts_at  BIGINT NOT NULL,
    ends_at    BIGINT,
    published  BOOLEAN NOT NULL DEFAULT FALSE,
    position   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (id, lang)
);
CREATE INDEX content_banners_list ON content_banners (place, lang, published, position);

CREATE TABLE content_announcements (
    id           TEXT NOT NULL,
    lang         TEXT NOT NULL CHECK (lang IN ('en', 'ja')),
    title        TEXT NOT NULL,
    link         TEXT NOT NULL,
    published_at BIGINT NOT NULL,
    published    BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (id, lang)
);
CREATE INDEX content_announcements_list ON content_announcements (lang, published, published_at);

-- Referral rewards: how far each referee's fills have been read per exchange and market type (Unix microseconds),
-- so the rewards job reads only newer fills (rewards themselves are idempotent by source_ref).
CREATE TABLE referral_fill_cursors (
    member_id   TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    exchange    TEXT NOT NULL,
    market_type TEXT NOT NULL,
    read_until  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    PRIMARY KEY (member_id, exchange, market_type)
);

-- +goose Down
DROP TABLE referral_fill_cursors;
DROP TABLE content_announcements;
DROP TABLE content_banners;
DROP TABLE content_events;
