-- The order journal: every order intent a member sends through exhub, written before the plugin call, and its
-- outcome; and the amend/cancel actions on those orders. Rows are never deleted with the member: they are the
-- record of what was sent to an exchange with the member's money.
-- +goose Up
CREATE TABLE orders (
    id                TEXT PRIMARY KEY,
    member_id         TEXT NOT NULL,
    account_id        TEXT NOT NULL,
    exchange          TEXT NOT NULL,
    market_type       TEXT NOT NULL CHECK (market_type IN ('SPOT', 'SWAP')),
    symbol            TEXT NOT NULL,
    kind              TEXT NOT NULL CHECK (kind IN ('order', 'close', 'algo')),
    side              TEXT NOT NULL,
    type              TEXT NOT NULL,
    time_in_force     TEXT NOT NULL DEFAULT '',
    price             TEXT NOT NULL DEFAULT '',
    qty               TEXT NOT NULL DEFAULT '',
    quote_qty         TEXT NOT NULL DEFAULT '',
    reduce_only       BOOLEAN NOT NULL DEFAULT FALSE,
    position_side     TEXT NOT NULL DEFAULT '',
    margin_mode       TEXT NOT NULL DEFAULT '',
    take_profit       TEXT NOT NULL DEFAULT '',
    stop_loss         TEXT NOT NULL DEFAULT '',
    -- Algo (conditional) orders: the trigger, and whether it closes the whole position.
    trigger_price     TEXT NOT NULL DEFAULT '',
    trigger_type      TEXT NOT NULL DEFAULT '',
    close_position    BOOLEAN NOT NULL DEFAULT FALSE,
    client_order_id   TEXT NOT NULL,
    idempotency_key   TEXT NOT NULL DEFAULT '',
    request_hash      TEXT NOT NULL DEFAULT '',
    -- sent: written, the call is (or was, before a crash) under way; acknowledged; rejected; unknown: the call may
    -- have executed; not_placed: resolved as never reaching the book.
    state             TEXT NOT NULL CHECK (state IN ('sent', 'acknowledged', 'rejected', 'unknown', 'not_placed')),
    exchange_order_id TEXT NOT NULL DEFAULT '',
    -- The exchange's order status as last read (NEW, PARTIALLY_FILLED, FILLED, CANCELLED, REJECTED, EXPIRED; algo
    -- orders: WAITING, TRIGGERED, CANCELLED, FAILED). exchange_order_id is the algo id for algo orders.
    order_status      TEXT NOT NULL DEFAULT '',
    filled_qty        TEXT NOT NULL DEFAULT '',
    avg_price         TEXT NOT NULL DEFAULT '',
    reject_code       TEXT NOT NULL DEFAULT '',
    exchange_code     TEXT NOT NULL DEFAULT '',
    reject_message    TEXT NOT NULL DEFAULT '',
    resolve_attempts  INTEGER NOT NULL DEFAULT 0,
    next_resolve_at   BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE UNIQUE INDEX orders_client_id ON orders (exchange, client_order_id);
CREATE UNIQUE INDEX orders_idempotency ON orders (member_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX orders_member ON orders (member_id, created_at);
CREATE INDEX orders_state ON orders (state, next_resolve_at);
CREATE INDEX orders_open ON orders (exchange, account_id, market_type, order_status);

CREATE TABLE order_actions (
    id                TEXT PRIMARY KEY,
    member_id         TEXT NOT NULL,
    order_id          TEXT NOT NULL,
    action            TEXT NOT NULL CHECK (action IN ('amend', 'cancel')),
    price             TEXT NOT NULL DEFAULT '',
    qty               TEXT NOT NULL DEFAULT '',
    idempotency_key   TEXT NOT NULL DEFAULT '',
    request_hash      TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL CHECK (state IN ('sent', 'done', 'rejected', 'unknown')),
    reject_code       TEXT NOT NULL DEFAULT '',
    exchange_code     TEXT NOT NULL DEFAULT '',
    reject_message    TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE UNIQUE INDEX order_actions_idempotency ON order_actions (member_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX order_actions_order ON order_actions (order_id, created_at);

-- +goose Down
DROP TABLE order_actions;
DROP TABLE orders;
