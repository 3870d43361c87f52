-- The money-movement journal: every transfer, withdrawal, convert, gift, faucet grant and transfer to a partner
-- exchange a member asks for through exhub, written with a client id the BFF assigns before the one plugin call, and
-- its outcome. Rows are never deleted with the member: they record what was sent to an exchange with the member's
-- money.
-- +goose Up
CREATE TABLE movements (
    id                  TEXT PRIMARY KEY,
    member_id           TEXT NOT NULL,
    exchange            TEXT NOT NULL,
    -- The member's exchange account the movement was made from (empty for a faucet grant: the master's).
    account_id          TEXT NOT NULL DEFAULT '',
    kind                TEXT NOT NULL CHECK (kind IN ('transfer', 'withdraw', 'convert', 'gift', 'faucet', 'exchange_transfer')),
    client_id           TEXT NOT NULL,
    idempotency_key     TEXT NOT NULL DEFAULT '',
    request_hash        TEXT NOT NULL DEFAULT '',
    asset               TEXT NOT NULL,
    amount              TEXT NOT NULL,
    fee                 TEXT NOT NULL DEFAULT '',
    -- Convert: what the quote gives.
    to_asset            TEXT NOT NULL DEFAULT '',
    to_amount           TEXT NOT NULL DEFAULT '',
    -- Transfer: FUNDING or TRADING.
    from_wallet         TEXT NOT NULL DEFAULT '',
    to_wallet           TEXT NOT NULL DEFAULT '',
    -- Withdraw and exchange transfer.
    network             TEXT NOT NULL DEFAULT '',
    address             TEXT NOT NULL DEFAULT '',
    memo                TEXT NOT NULL DEFAULT '',
    target_exchange     TEXT NOT NULL DEFAULT '',
    -- Gift: the receiving member; gift and faucet: the sub-accounts on both sides ('' is the master).
    recipient_member_id TEXT NOT NULL DEFAULT '',
    from_sub_account    TEXT NOT NULL DEFAULT '',
    to_sub_account      TEXT NOT NULL DEFAULT '',
    quote_id            TEXT NOT NULL DEFAULT '',
    -- sent: written, the call is (or was, before a crash) under way; acknowledged: the exchange took it and it is
    -- not final yet (a withdrawal on its way); completed; rejected: refused, nothing moved; unknown: the call may have
    -- executed; failed: resolved as never executed, or the exchange reports it failed.
    state               TEXT NOT NULL CHECK (state IN ('sent', 'acknowledged', 'completed', 'rejected', 'unknown', 'failed')),
    exchange_id         TEXT NOT NULL DEFAULT '',
    exchange_status     TEXT NOT NULL DEFAULT '',
    tx_id               TEXT NOT NULL DEFAULT '',
    error_code          TEXT NOT NULL DEFAULT '',
    exchange_code       TEXT NOT NULL DEFAULT '',
    error_text          TEXT NOT NULL DEFAULT '',
    resolve_attempts    INTEGER NOT NULL DEFAULT 0,
    next_resolve_at     BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
CREATE UNIQUE INDEX movements_client_id ON movements (exchange, client_id);
CREATE UNIQUE INDEX movements_idempotency ON movements (member_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX movements_member ON movements (member_id, created_at);
CREATE INDEX movements_recipient ON movements (recipient_member_id, created_at) WHERE recipient_member_id <> '';
CREATE INDEX movements_state ON movements (state, next_resolve_at);

-- +goose Down
DROP TABLE movements;
