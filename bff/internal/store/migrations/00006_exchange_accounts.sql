-- Exchange accounts: a member's account on an exchange, made by the broker (a sub-account of the operator) or
-- linked with the member's own API key. The credentials are sealed (AES-256-GCM, base64 text) under the
-- key-encryption key named by kek_id, bound to member, account and exchange; the key itself is never stored.
-- +goose Up
CREATE TABLE exchange_accounts (
    id             TEXT PRIMARY KEY,
    member_id      TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    exchange       TEXT NOT NULL,
    mode           TEXT NOT NULL CHECK (mode IN ('broker', 'linked')),
    name           TEXT NOT NULL,
    sub_account_id TEXT NOT NULL DEFAULT '',
    key_last4      TEXT NOT NULL DEFAULT '',
    sealed         TEXT NOT NULL DEFAULT '',
    kek_id         TEXT NOT NULL DEFAULT '',
    permissions    TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('provisioning', 'active', 'failed')),
    status_reason  TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    UNIQUE (member_id, exchange)
);
CREATE INDEX exchange_accounts_status ON exchange_accounts (status, updated_at);
CREATE INDEX exchange_accounts_kek ON exchange_accounts (kek_id);

-- Provisioning journal of broker accounts: one row per step, written with its client request id before the
-- exchange is called, so a restart resumes the step with the same id instead of making a second sub-account.
CREATE TABLE account_provisioning (
    account_id TEXT NOT NULL REFERENCES exchange_accounts (id) ON DELETE CASCADE,
    step       TEXT NOT NULL CHECK (step IN ('create_sub_account', 'create_api_key', 'transfer')),
    request_id TEXT NOT NULL UNIQUE,
    state      TEXT NOT NULL CHECK (state IN ('started', 'done', 'failed')),
    result     TEXT NOT NULL DEFAULT '',
    error      TEXT NOT NULL DEFAULT '',
    attempts   BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, step)
);

-- +goose Down
DROP TABLE account_provisioning;
DROP TABLE exchange_accounts;
