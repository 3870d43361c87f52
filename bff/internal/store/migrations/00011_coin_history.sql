-- Wallet: the coins a member used last per kind of wallet form (the pickers list them first), and the member's
-- deposit exchange (where the wallet's Deposit page points by default).
-- +goose Up
CREATE TABLE coin_history (
    member_id TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('OTHER', 'DEPOSIT', 'WITHDRAW', 'EXCHANGE', 'CONVERT')),
    coin      TEXT NOT NULL,
    used_at   BIGINT NOT NULL,
    PRIMARY KEY (member_id, kind, coin)
);

CREATE TABLE member_wallet (
    member_id        TEXT PRIMARY KEY REFERENCES members (id) ON DELETE CASCADE,
    deposit_exchange TEXT NOT NULL,
    updated_at       BIGINT NOT NULL
);

-- +goose Down
DROP TABLE member_wallet;
DROP TABLE coin_history;
