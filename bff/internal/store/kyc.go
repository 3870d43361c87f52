package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"
)

// KYC application kinds: a person (KYC) or a company (KYB).
const (
	KYCPerson  = "person"
	KYCCompany = "company"
)

// KYC application states.
const (
	KYCPending   = "pending"
	KYCInReview  = "in_review"
	KYCCompleted = "completed"
	KYCDeclined  = "declined"
)

// kycNext lists the allowed moves: pending -> in_review -> completed | declined. A declined member applies again
// with a new application (CreateKYCApplication), never by moving the old one.
var kycNext = map[string][]string{
	KYCPending:  {KYCInReview},
	KYCInReview: {KYCCompleted, KYCDeclined},
}

// ValidKYCTransition reports whether an application may move from one state to the other.
func ValidKYCTransition(from, to string) bool {
	for _, s := range kycNext[from] {
		if s == to {
			return true
		}
	}
	return false
}

// KYCApplication is one identity check request.
type KYCApplication struct {
	ID         string
	MemberID   string
	Kind       string
	State      string
	Reason     string // why it was declined (or a reviewer's note)
	Reviewer   string // who decided: an operator name, or "auto" in demo mode
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ReviewedAt time.Time // zero until completed or declined
}

// KYCDocument is one uploaded file of an application. The file itself lives under the data dir at StoragePath.
type KYCDocument struct {
	ID            string
	ApplicationID string
	FileName      string
	ContentType   string
	Size          int64
	SHA256        string // lower-case hex
	StoragePath   string // relative to the data dir, slash-separated
	CreatedAt     time.Time
}

var sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Validate checks the document's metadata (not the file).
func (d KYCDocument) Validate() error {
	switch {
	case d.FileName == "" || len(d.FileName) > 255 || strings.ContainsAny(d.FileName, "/\\\x00"):
		return fmt.Errorf("%w: file name %q", ErrInvalid, d.FileName)
	case d.ContentType == "" || len(d.ContentType) > 100:
		return fmt.Errorf("%w: content type %q", ErrInvalid, d.ContentType)
	case d.Size < 0:
		return fmt.Errorf("%w: size %d", ErrInvalid, d.Size)
	case !sha256Re.MatchString(d.SHA256):
		return fmt.Errorf("%w: sha256 must be 64 lower-case hex digits", ErrInvalid)
	case d.StoragePath == "" || path.IsAbs(d.StoragePath) || path.Clean(d.StoragePath) != d.StoragePath ||
		d.StoragePath == ".." || strings.HasPrefix(d.StoragePath, "../") || strings.Contains(d.StoragePath, "\\"):
		return fmt.Errorf("%w: storage path %q must be relative to the data dir and clean", ErrInvalid, d.StoragePath)
	}
	return nil
}

const kycColumns = "id, member_id, kind, state, reason, reviewer, created_at, updated_at, reviewed_at"

func scanKYC(sc interface{ Scan(...any) error }) (KYCApplication, error) {
	var a KYCApplication
	var created, updated int64
	var reviewed sql.NullInt64
	if err := sc.Scan(&a.ID, &a.MemberID, &a.Kind, &a.State, &a.Reason, &a.Reviewer, &created, &updated, &reviewed); err != nil {
		return KYCApplication{}, err
	}
	a.CreatedAt, a.UpdatedAt, a.ReviewedAt = fromMicros(created), fromMicros(updated), nullMicros(reviewed)
	return a, nil
}

// CreateKYCApplication opens a pending application. A member whose latest application is pending, in review or
// completed gets ErrConflict; after a decline they may apply again.
func (s *Store) CreateKYCApplication(ctx context.Context, memberID, kind string) (KYCApplication, error) {
	if kind != KYCPerson && kind != KYCCompany {
		return KYCApplication{}, fmt.Errorf("%w: kyc kind %q is neither person nor company", ErrInvalid, kind)
	}
	at := s.stamp()
	a := KYCApplication{ID: newID(), MemberID: memberID, Kind: kind, State: KYCPending, CreatedAt: at, UpdatedAt: at}
	_, err := s.w().exec(ctx, `INSERT INTO kyc_applications (id, member_id, kind, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, a.ID, memberID, kind, KYCPending, micros(at), micros(at))
	switch {
	case isUnique(err):
		return KYCApplication{}, fmt.Errorf("%w: member %q has an application that is not declined", ErrConflict, memberID)
	case isForeignKey(err):
		return KYCApplication{}, fmt.Errorf("%w: member %q", ErrNotFound, memberID)
	case err != nil:
		return KYCApplication{}, fmt.Errorf("store: create kyc application: %w", err)
	}
	return a, nil
}

// KYCApplication returns one application.
func (s *Store) KYCApplication(ctx context.Context, id string) (KYCApplication, error) {
	a, err := scanKYC(s.r().row(ctx, "SELECT "+kycColumns+" FROM kyc_applications WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return KYCApplication{}, fmt.Errorf("%w: kyc application %q", ErrNotFound, id)
	}
	if err != nil {
		return KYCApplication{}, fmt.Errorf("store: kyc application: %w", err)
	}
	return a, nil
}

// LatestKYCApplication returns the member's newest application (ErrNotFound when they never applied).
func (s *Store) LatestKYCApplication(ctx context.Context, memberID string) (KYCApplication, error) {
	a, err := scanKYC(s.r().row(ctx, "SELECT "+kycColumns+` FROM kyc_applications WHERE member_id = ?
		ORDER BY created_at DESC, id DESC LIMIT 1`, memberID))
	if errors.Is(err, sql.ErrNoRows) {
		return KYCApplication{}, fmt.Errorf("%w: no kyc application of member %q", ErrNotFound, memberID)
	}
	if err != nil {
		return KYCApplication{}, fmt.Errorf("store: kyc application: %w", err)
	}
	return a, nil
}

// ListKYCByState returns applications in one state, oldest first, at most limit (1 to 1000): the operator's queue.
func (s *Store) ListKYCByState(ctx context.Context, state string, limit int) ([]KYCApplication, error) {
	switch state {
	case KYCPending, KYCInReview, KYCCompleted, KYCDeclined:
	default:
		return nil, fmt.Errorf("%w: kyc state %q", ErrInvalid, state)
	}
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx, "SELECT "+kycColumns+` FROM kyc_applications WHERE state = ?
		ORDER BY created_at, id LIMIT ?`, state, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list kyc: %w", err)
	}
	defer rows.Close()
	out := []KYCApplication{}
	for rows.Next() {
		a, err := scanKYC(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list kyc: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list kyc: %w", err)
	}
	return out, nil
}

// TransitionKYC moves an application to state `to`, recording the reviewer and the reason. Moves outside
// pending -> in_review -> completed|declined get ErrInvalidTransition; a concurrent move that won gets the same.
func (s *Store) TransitionKYC(ctx context.Context, id, to, reviewer, reason string) (KYCApplication, error) {
	if len(reviewer) > 128 || len(reason) > 1000 {
		return KYCApplication{}, fmt.Errorf("%w: reviewer or reason too long", ErrInvalid)
	}
	var out KYCApplication
	err := s.tx(ctx, func(x q) error {
		a, err := scanKYC(x.row(ctx, "SELECT "+kycColumns+" FROM kyc_applications WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: kyc application %q", ErrNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("store: kyc transition: %w", err)
		}
		if !ValidKYCTransition(a.State, to) {
			return fmt.Errorf("%w: kyc application %s is %s, cannot become %q", ErrInvalidTransition, id, a.State, to)
		}
		at := s.stamp()
		var reviewed any
		if to == KYCCompleted || to == KYCDeclined {
			reviewed = micros(at)
			a.ReviewedAt = at
		}
		res, err := x.exec(ctx, `UPDATE kyc_applications SET state = ?, reviewer = ?, reason = ?, updated_at = ?,
			reviewed_at = ? WHERE id = ? AND state = ?`, to, reviewer, reason, micros(at), reviewed, id, a.State)
		if err != nil {
			return fmt.Errorf("store: kyc transition: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("store: kyc transition: %w", err)
		} else if n == 0 {
			return fmt.Errorf("%w: kyc application %s changed meanwhile", ErrInvalidTransition, id)
		}
		a.State, a.Reviewer, a.Reason, a.UpdatedAt = to, reviewer, reason, at
		out = a
		return nil
	})
	return out, err
}

// AddKYCDocument records an uploaded file on a pending application (ErrInvalidTransition once it left pending).
func (s *Store) AddKYCDocument(ctx context.Context, d KYCDocument) (KYCDocument, error) {
	if err := d.Validate(); err != nil {
		return KYCDocument{}, err
	}
	d.ID, d.CreatedAt = newID(), s.stamp()
	err := s.tx(ctx, func(x q) error {
		var state string
		query := "SELECT state FROM kyc_applications WHERE id = ?"
		if s.pg {
			query += " FOR UPDATE"
		}
		err := x.row(ctx, query, d.ApplicationID).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: kyc application %q", ErrNotFound, d.ApplicationID)
		}
		if err != nil {
			return fmt.Errorf("store: add kyc document: %w", err)
		}
		if state != KYCPending {
			return fmt.Errorf("%w: documents are added while pending, the application is %s", ErrInvalidTransition, state)
		}
		_, err = x.exec(ctx, `INSERT INTO kyc_documents (id, application_id, file_name, content_type, size_bytes, sha256,
			storage_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, d.ApplicationID, d.FileName, d.ContentType,
			d.Size, d.SHA256, d.StoragePath, micros(d.CreatedAt))
		if isUnique(err) {
			return fmt.Errorf("%w: storage path %q already recorded", ErrConflict, d.StoragePath)
		}
		if err != nil {
			return fmt.Errorf("store: add kyc document: %w", err)
		}
		return nil
	})
	if err != nil {
		return KYCDocument{}, err
	}
	return d, nil
}

// KYCDocuments lists an application's documents in upload order.
func (s *Store) KYCDocuments(ctx context.Context, applicationID string) ([]KYCDocument, error) {
	rows, err := s.r().query(ctx, `SELECT id, application_id, file_name, content_type, size_bytes, sha256, storage_path,
		created_at FROM kyc_documents WHERE application_id = ? ORDER BY created_at, id`, applicationID)
	if err != nil {
		return nil, fmt.Errorf("store: kyc documents: %w", err)
	}
	defer rows.Close()
	out := []KYCDocument{}
	for rows.Next() {
		var d KYCDocument
		var at int64
		if err := rows.Scan(&d.ID, &d.ApplicationID, &d.FileName, &d.ContentType, &d.Size, &d.SHA256, &d.StoragePath,
			&at); err != nil {
			return nil, fmt.Errorf("store: kyc documents: %w", err)
		}
		d.CreatedAt = fromMicros(at)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: kyc documents: %w", err)
	}
	return out, nil
}

// SetExchangeKYC records whether the member passed an exchange's own KYC.
func (s *Store) SetExchangeKYC(ctx context.Context, memberID, exchange string, verified bool) error {
	if !slugRe.MatchString(exchange) {
		return fmt.Errorf("%w: exchange %q is not a slug", ErrInvalid, exchange)
	}
	_, err := s.w().exec(ctx, `INSERT INTO member_exchange_kyc (member_id, exchange, verified, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (member_id, exchange) DO UPDATE SET verified = excluded.verified, updated_at = excluded.updated_at`,
		memberID, exchange, verified, micros(s.stamp()))
	if isForeignKey(err) {
		return fmt.Errorf("%w: member %q", ErrNotFound, memberID)
	}
	if err != nil {
		return fmt.Errorf("store: set exchange kyc: %w", err)
	}
	return nil
}

// ExchangeKYC returns the member's per-exchange KYC flags by exchange slug (exchanges never set are absent).
func (s *Store) ExchangeKYC(ctx context.Context, memberID string) (map[string]bool, error) {
	rows, err := s.r().query(ctx, "SELECT exchange, verified FROM member_exchange_kyc WHERE member_id = ?", memberID)
	if err != nil {
		return nil, fmt.Errorf("store: exchange kyc: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var ex string
		var v bool
		if err := rows.Scan(&ex, &v); err != nil {
			return nil, fmt.Errorf("store: exchange kyc: %w", err)
		}
		out[ex] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: exchange kyc: %w", err)
	}
	return out, nil
}
