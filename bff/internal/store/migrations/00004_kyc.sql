-- KYC (person) and KYB (company) applications, their documents, and per-exchange KYC flags.
-- +goose Up
CREATE TABLE kyc_applications (
    id          TEXT PRIMARY KEY,
    member_id   TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('person', 'company')),
    state       TEXT NOT NULL CHECK (state IN ('pending', 'in_review', 'completed', 'declined')),
    reason      TEXT NOT NULL DEFAULT '',
    reviewer    TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    reviewed_at BIGINT
);
-- At most one application per member that is not declined: a declined member may apply again.
CREATE UNIQUE INDEX kyc_applications_one_open ON kyc_applications (member_id) WHERE state <> 'declined';
CREATE INDEX kyc_applications_state ON kyc_applications (state, created_at);

CREATE TABLE kyc_documents (
    id             TEXT PRIMARY KEY,
    application_id TEXT NOT NULL REFERENCES kyc_applications (id) ON DELETE CASCADE,
    file_name      TEXT NOT NULL,
    content_type   TEXT NOT NULL,
    size_bytes     BIGINT NOT NULL CHECK (size_bytes >= 0),
    sha256         TEXT NOT NULL,
    storage_path   TEXT NOT NULL UNIQUE,
    created_at     BIGINT NOT NULL
);
CREATE INDEX kyc_documents_application ON kyc_documents (application_id);

CREATE TABLE member_exchange_kyc (
    member_id  TEXT NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    exchange   TEXT NOT NULL,
    verified   BOOLEAN NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (member_id, exchange)
);

-- +goose Down
DROP TABLE member_exchange_kyc;
DROP TABLE kyc_documents;
DROP TABLE kyc_applications;
