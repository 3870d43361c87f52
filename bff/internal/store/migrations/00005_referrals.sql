-- Referral rewards: amounts are decimal text, summed exactly in Go.
-- +goose Up
CREATE TABLE referral_rewards (
    id         TEXT PRIMARY KEY,
    member_id  TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    referee_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    amount     TEXT NOT NULL,
    coin       TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('settled', 'unsettled')),
    source_ref TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    settled_at BIGINT
);
CREATE INDEX referral_rewards_member ON referral_rewards (member_id, state);

-- +goose Down
DROP TABLE referral_rewards;
