-- Favorites: markets a member starred.
-- +goose Up
CREATE TABLE favorites (
    member_id   TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    exchange    TEXT NOT NULL,
    market_type TEXT NOT NULL CHECK (market_type IN ('SPOT', 'SWAP')),
    symbol      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (member_id, exchange, market_type, symbol)
);

-- +goose Down
DROP TABLE favorites;
