// Package kyc handles members' identity verification (KYC, and KYB for companies) beside the store: document files
// under <data_dir>/kyc/<member>/ (content sniffed, random names, SHA-256 recorded), the operator's decisions
// (exhub-admin kyc approve|decline) and, in demo mode, an auto-reviewer that completes applications in review after
// a delay.
package kyc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/exhub/exhub/bff/internal/store"
)

// MaxDocumentBytes is the spec's limit of one document: 5 MB.
const MaxDocumentBytes = 5 << 20

// TooLargeMessage is the spec's message for a document over the limit.
const TooLargeMessage = "The attachment size exceeds the limit (maximum 5MB)"

// Errors of Upload besides the store's.
var (
	// ErrTooLarge: the document is larger than MaxDocumentBytes.
	ErrTooLarge = errors.New(TooLargeMessage)
	// ErrUnsupportedType: the content is neither a PNG, JPEG or WebP image nor a PDF.
	ErrUnsupportedType = errors.New("the document must be a PNG, JPEG or WebP image or a PDF")
)

// AcceptedTypes maps the sniffed content types accepted to the stored file's extension.
var AcceptedTypes = map[string]string{
	"image/png":       ".png",
	"image/jpeg":      ".jpg",
	"image/webp":      ".webp",
	"application/pdf": ".pdf",
}

// Config is the kyc section (YAML key kyc).
type Config struct {
	// MaxDocuments bounds the documents of one application.
	MaxDocuments int `yaml:"max_documents"`
	// AutoReview completes applications in review after AutoReviewDelay; it runs in demo mode only.
	AutoReview bool `yaml:"auto_review"`
	// AutoReviewDelay is how long an application stays in review before the auto-reviewer completes it.
	AutoReviewDelay time.Duration `yaml:"auto_review_delay"`
	// AutoReviewInterval is how often the auto-reviewer looks.
	AutoReviewInterval time.Duration `yaml:"auto_review_interval"`
	// Exchanges whose KYC flag a completed application sets (empty: none; the app passes the configured exchanges).
	Exchanges []string `yaml:"exchanges"`
}

// DefaultConfig: 10 documents, auto-review on (demo mode only) after 10 s, looking every second.
func DefaultConfig() Config {
	return Config{MaxDocuments: 10, AutoReview: true, AutoReviewDelay: 10 * time.Second, AutoReviewInterval: time.Second}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var errs []error
	if c.MaxDocuments < 1 || c.MaxDocuments > 100 {
		errs = append(errs, fmt.Errorf("max_documents: %d, want 1 to 100", c.MaxDocuments))
	}
	if c.AutoReviewDelay < 0 || c.AutoReviewDelay > 24*time.Hour {
		errs = append(errs, fmt.Errorf("auto_review_delay: %s, want 0 to 24h", c.AutoReviewDelay))
	}
	if c.AutoReviewInterval < 100*time.Millisecond || c.AutoReviewInterval > time.Hour {
		errs = append(errs, fmt.Errorf("auto_review_interval: %s, want 100ms to 1h", c.AutoReviewInterval))
	}
	return errors.Join(errs...)
}

// Service is KYC over the store and the data dir.
type Service struct {
	store   *store.Store
	dataDir string
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
}

// Option adjusts New.
type Option func(*Service)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// New returns the service; documents go under dataDir/kyc.
func New(st *store.Store, dataDir string, cfg Config, log *slog.Logger, opts ...Option) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{store: st, dataDir: dataDir, cfg: cfg, log: log, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Config is the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// Path is the absolute path of a stored document.
func (s *Service) Path(d store.KYCDocument) string {
	return filepath.Join(s.dataDir, filepath.FromSlash(d.StoragePath))
}

// Upload stores one document of the member's pending application: at most MaxDocumentBytes (ErrTooLarge beyond),
// a PNG, JPEG or WebP image or a PDF by its content (ErrUnsupportedType otherwise), written under
// <data_dir>/kyc/<member>/ with a random name; name is only the client's label (its directory parts dropped).
// Errors from the store: ErrNotFound (no application), ErrInvalidTransition (not pending), ErrLimit (too many).
func (s *Service) Upload(ctx context.Context, memberID, name string, body io.Reader) (store.KYCDocument, error) {
	app, err := s.store.LatestKYCApplication(ctx, memberID)
	if err != nil {
		return store.KYCDocument{}, err
	}
	if app.State != store.KYCPending {
		return store.KYCDocument{}, fmt.Errorf("%w: the application is %s; documents are added while pending",
			store.ErrInvalidTransition, app.State)
	}
	docs, err := s.store.KYCDocuments(ctx, app.ID)
	if err != nil {
		return store.KYCDocument{}, err
	}
	if len(docs) >= s.cfg.MaxDocuments {
		return store.KYCDocument{}, fmt.Errorf("%w: at most %d documents", store.ErrLimit, s.cfg.MaxDocuments)
	}

	rel := path.Join("kyc", memberDir(memberID))
	dir := filepath.Join(s.dataDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store.KYCDocument{}, fmt.Errorf("kyc: document directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return store.KYCDocument{}, fmt.Errorf("kyc: document file: %w", err)
	}
	tmpName := tmp.Name()
	keep := false
	defer func() {
		if !keep {
			_ = os.Remove(tmpName)
		}
	}()
	h := sha256.New()
	head := make([]byte, 512)
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		_ = tmp.Close()
		return store.KYCDocument{}, fmt.Errorf("kyc: read document: %w", err)
	}
	head = head[:n]
	ctype := sniff(head)
	ext, ok := AcceptedTypes[ctype]
	if !ok {
		_ = tmp.Close()
		return store.KYCDocument{}, ErrUnsupportedType
	}
	size, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(io.MultiReader(bytes.NewReader(head), body), MaxDocumentBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return store.KYCDocument{}, fmt.Errorf("kyc: write document: %w", err)
	}
	if size > MaxDocumentBytes {
		return store.KYCDocument{}, ErrTooLarge
	}
	file := randomName() + ext
	final := filepath.Join(dir, file)
	if err := os.Rename(tmpName, final); err != nil {
		return store.KYCDocument{}, fmt.Errorf("kyc: store document: %w", err)
	}
	d, err := s.store.AddKYCDocument(ctx, store.KYCDocument{ApplicationID: app.ID, FileName: label(name, ext),
		ContentType: ctype, Size: size, SHA256: hex.EncodeToString(h.Sum(nil)), StoragePath: path.Join(rel, file)})
	if err != nil {
		_ = os.Remove(final)
		return store.KYCDocument{}, err
	}
	keep = true
	s.log.Info("kyc document stored", "member", memberID, "application", app.ID, "document", d.ID, "type", ctype,
		"size", size)
	return d, nil
}

// sniff is the content type by magic numbers (net/http's sniffer knows PNG, JPEG, WebP and PDF).
func sniff(head []byte) string {
	t := http.DetectContentType(head)
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

// memberDir is the member id as a directory name (Kratos ids are UUIDs; anything else is hex-encoded).
func memberDir(id string) string {
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return "x" + hex.EncodeToString([]byte(id))
		}
	}
	return id
}

func randomName() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// label is the client's file name without any directory part or control characters, at most 100 characters; a
// default from the type when nothing is left.
func label(name, ext string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	var b strings.Builder
	for _, r := range name {
		if unicode.IsControl(r) || r == '/' || r == 0 {
			continue
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if out == "." || out == ".." || out == "/" {
		out = ""
	}
	for utf8.RuneCountInString(out) > 100 {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	if out == "" {
		out = "document" + ext
	}
	return out
}

// Start opens a new application of kind (store.KYCPerson or store.KYCCompany) for the member.
func (s *Service) Start(ctx context.Context, memberID, kind string) (store.KYCApplication, error) {
	return s.store.CreateKYCApplication(ctx, memberID, kind)
}

// Submit moves the member's pending application to review; it needs at least one document.
func (s *Service) Submit(ctx context.Context, memberID string) (store.KYCApplication, error) {
	app, err := s.store.LatestKYCApplication(ctx, memberID)
	if err != nil {
		return store.KYCApplication{}, err
	}
	docs, err := s.store.KYCDocuments(ctx, app.ID)
	if err != nil {
		return store.KYCApplication{}, err
	}
	if app.State == store.KYCPending && len(docs) == 0 {
		return store.KYCApplication{}, fmt.Errorf("%w: upload at least one document first", store.ErrInvalidTransition)
	}
	return s.store.TransitionKYC(ctx, app.ID, store.KYCInReview, "", "")
}

// Approve completes an application in review (reviewer names who decided) and sets the member's KYC flag on the
// configured exchanges.
func (s *Service) Approve(ctx context.Context, applicationID, reviewer string) (store.KYCApplication, error) {
	app, err := s.store.TransitionKYC(ctx, applicationID, store.KYCCompleted, reviewer, "")
	if err != nil {
		return store.KYCApplication{}, err
	}
	for _, ex := range s.cfg.Exchanges {
		if err := s.store.SetExchangeKYC(ctx, app.MemberID, ex, true); err != nil {
			return app, fmt.Errorf("kyc: exchange flag %s: %w", ex, err)
		}
	}
	return app, nil
}

// Decline declines an application in review with a reason the member sees.
func (s *Service) Decline(ctx context.Context, applicationID, reviewer, reason string) (store.KYCApplication, error) {
	if strings.TrimSpace(reason) == "" {
		return store.KYCApplication{}, fmt.Errorf("%w: a decline needs a reason", store.ErrInvalid)
	}
	return s.store.TransitionKYC(ctx, applicationID, store.KYCDeclined, reviewer, reason)
}

// Resolve finds an application by its id or, given a member id, the member's latest application.
func (s *Service) Resolve(ctx context.Context, id string) (store.KYCApplication, error) {
	app, err := s.store.KYCApplication(ctx, id)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return app, err
	}
	return s.store.LatestKYCApplication(ctx, id)
}
