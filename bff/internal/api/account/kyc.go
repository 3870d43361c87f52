package account

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
)

// KYCDocument is an uploaded document (its stored path stays on the server).
type KYCDocument struct {
	ID          string    `json:"id"`
	FileName    string    `json:"file_name" doc:"The uploaded file's name, without any directory"`
	ContentType string    `json:"content_type" enum:"image/png,image/jpeg,image/webp,application/pdf" doc:"Sniffed from the content"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	CreatedAt   time.Time `json:"created_at"`
}

// ExchangeKYC is the member's verification state on one exchange.
type ExchangeKYC struct {
	Exchange string `json:"exchange"`
	Verified bool   `json:"verified"`
}

// KYC is the member's latest application (state "none" before the first).
type KYC struct {
	State         string        `json:"state" enum:"none,pending,in_review,completed,declined"`
	ApplicationID string        `json:"application_id,omitempty"`
	Kind          string        `json:"kind,omitempty" enum:"person,company" doc:"person (KYC) or company (KYB)"`
	Reason        string        `json:"reason,omitempty" doc:"Why it was declined"`
	CreatedAt     *time.Time    `json:"created_at,omitempty"`
	UpdatedAt     *time.Time    `json:"updated_at,omitempty"`
	ReviewedAt    *time.Time    `json:"reviewed_at,omitempty"`
	Documents     []KYCDocument `json:"documents"`
	Exchanges     []ExchangeKYC `json:"exchanges" doc:"Per-exchange KYC flags"`
	MaxDocuments  int           `json:"max_documents"`
	MaxFileBytes  int64         `json:"max_file_bytes"`
}

// KYCStart opens an application.
type KYCStart struct {
	Kind string `json:"kind" enum:"person,company"`
}

type uploadForm struct {
	File huma.FormFile `form:"file" required:"true" doc:"One PNG, JPEG or WebP image or PDF, at most 5 MB (checked by content, not name)"`
}

// uploadOverhead is what a multipart request may carry beside the file (boundaries, part headers).
const uploadOverhead = 64 << 10

func (r *routes) registerKYC(api huma.API) {
	const path = "/api/v1/me/kyc"
	huma.Register(api, r.op("get-kyc", http.MethodGet, path, "The member's KYC",
		"The latest application (state none, pending, in_review, completed or declined), its documents and the "+
			"per-exchange KYC flags."), r.getKYC)
	huma.Register(api, r.op("start-kyc", http.MethodPost, path, "Start a KYC application",
		"Opens a pending application for a person (KYC) or a company (KYB). 409 while another application is "+
			"not declined.", http.StatusConflict), r.startKYC)
	up := r.op("upload-kyc-document", http.MethodPost, path+"/documents", "Upload a KYC document",
		"multipart/form-data with one part named file: a PNG, JPEG or WebP image or a PDF (by content), at most "+
			"5 MB; 413 with 'The attachment size exceeds the limit (maximum 5MB)' beyond, 415 for other content, "+
			"409 unless the application is pending, 404 without one.",
		http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity)
	up.Middlewares = append(up.Middlewares, limitUpload)
	up.DefaultStatus = http.StatusCreated
	huma.Register(api, up, r.uploadKYC)
	huma.Register(api, r.op("submit-kyc", http.MethodPost, path+"/submit", "Submit the KYC application",
		"Moves the pending application to in_review (it needs a document). 409 from another state, 404 "+
			"without an application.", http.StatusNotFound, http.StatusConflict), r.submitKYC)
}

// limitUpload runs after the session and CSRF checks and before huma reads the form: it reads the multipart body
// with a bound, so a larger request is refused with the spec's message before it fills memory or disk.
func limitUpload(ctx huma.Context, next func(huma.Context)) {
	req, w := humago.Unwrap(ctx)
	max := int64(kyc.MaxDocumentBytes + uploadOverhead)
	tooLarge := func() {
		p := problem(http.StatusRequestEntityTooLarge, CodeTooLarge, kyc.TooLargeMessage)
		ctx.SetHeader("Content-Type", "application/problem+json")
		ctx.SetHeader("Connection", "close")
		ctx.SetStatus(p.Status)
		_ = json.NewEncoder(ctx.BodyWriter()).Encode(p)
	}
	if req.ContentLength > max {
		tooLarge()
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, max)
	if err := req.ParseMultipartForm(1 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge()
			return
		}
		p := problem(http.StatusUnprocessableEntity, CodeInvalid, "the body is not a multipart form with a file part")
		ctx.SetHeader("Content-Type", "application/problem+json")
		ctx.SetStatus(p.Status)
		_ = json.NewEncoder(ctx.BodyWriter()).Encode(p)
		return
	}
	next(ctx)
}

func ptime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func docOf(d store.KYCDocument) KYCDocument {
	return KYCDocument{ID: d.ID, FileName: d.FileName, ContentType: d.ContentType, Size: d.Size, SHA256: d.SHA256,
		CreatedAt: d.CreatedAt.UTC()}
}

// kycOf is the member's KYC answer.
func (r *routes) kycOf(ctx context.Context, memberID string) (KYC, error) {
	st := r.Members.Store()
	out := KYC{State: "none", Documents: []KYCDocument{}, Exchanges: []ExchangeKYC{}, MaxFileBytes: kyc.MaxDocumentBytes}
	if r.KYC != nil {
		out.MaxDocuments = r.KYC.Config().MaxDocuments
	}
	app, err := st.LatestKYCApplication(ctx, memberID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return KYC{}, err
	default:
		out.State, out.ApplicationID, out.Kind, out.Reason = app.State, app.ID, app.Kind, app.Reason
		out.CreatedAt, out.UpdatedAt, out.ReviewedAt = ptime(app.CreatedAt), ptime(app.UpdatedAt), ptime(app.ReviewedAt)
		docs, err := st.KYCDocuments(ctx, app.ID)
		if err != nil {
			return KYC{}, err
		}
		for _, d := range docs {
			out.Documents = append(out.Documents, docOf(d))
		}
	}
	flags, err := st.ExchangeKYC(ctx, memberID)
	if err != nil {
		return KYC{}, err
	}
	seen := map[string]bool{}
	for _, ex := range r.Exchanges {
		out.Exchanges = append(out.Exchanges, ExchangeKYC{Exchange: ex, Verified: flags[ex]})
		seen[ex] = true
	}
	var rest []string
	for ex := range flags {
		if !seen[ex] {
			rest = append(rest, ex)
		}
	}
	sort.Strings(rest)
	for _, ex := range rest {
		out.Exchanges = append(out.Exchanges, ExchangeKYC{Exchange: ex, Verified: flags[ex]})
	}
	return out, nil
}

func (r *routes) kycMember(ctx context.Context) (string, error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return "", err
	}
	if r.KYC == nil {
		return "", unavailable()
	}
	return m.ID, nil
}

func (r *routes) getKYC(ctx context.Context, _ *struct{}) (*reply[KYC], error) {
	id, err := r.kycMember(ctx)
	if err != nil {
		return nil, err
	}
	out, err := r.kycOf(ctx, id)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(out), nil
}

func (r *routes) startKYC(ctx context.Context, in *struct{ Body KYCStart }) (*reply[KYC], error) {
	id, err := r.kycMember(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.KYC.Start(ctx, id, in.Body.Kind); err != nil {
		return nil, r.fail(ctx, err)
	}
	out, err := r.kycOf(ctx, id)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(out), nil
}

func (r *routes) uploadKYC(ctx context.Context, in *struct {
	RawBody huma.MultipartFormFiles[uploadForm]
}) (*reply[KYCDocument], error) {
	id, err := r.kycMember(ctx)
	if err != nil {
		return nil, err
	}
	f := in.RawBody.Data().File
	if f.Size > kyc.MaxDocumentBytes {
		return nil, r.fail(ctx, kyc.ErrTooLarge)
	}
	defer f.Close()
	d, err := r.KYC.Upload(ctx, id, f.Filename, f)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(docOf(d)), nil
}

func (r *routes) submitKYC(ctx context.Context, _ *struct{}) (*reply[KYC], error) {
	id, err := r.kycMember(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.KYC.Submit(ctx, id); err != nil {
		return nil, r.fail(ctx, err)
	}
	out, err := r.kycOf(ctx, id)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(out), nil
}
