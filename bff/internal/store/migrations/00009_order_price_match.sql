-- An order the exchange prices from its own book (exchange.v1 price_match, e.g. Binance priceMatch): the journal
-- records the choice sent (QUEUE, OPPONENT, ...; empty: the order's own price).
-- +goose Up
ALTER TABLE orders ADD COLUMN price_match TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE orders DROP COLUMN price_match;
