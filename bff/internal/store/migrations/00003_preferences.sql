-- Preferences: one JSON document per member, versioned for optimistic concurrency.
-- +goose Up
CREATE TABLE preferences (
    member_id  TEXT PRIMARY KEY REFERENCES members (id) ON DELETE CASCADE,
    doc        TEXT NOT NULL,
    version    BIGINT NOT NULL CHECK (version > 0),
    updated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE preferences;
