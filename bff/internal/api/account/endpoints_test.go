package account_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/api/account"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
)

type problemDoc struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// expect checks a response's status (and, for problems, the media type and code) and decodes its body into out.
func expect(t *testing.T, resp *httptest.ResponseRecorder, status int, code string, out any) {
	t.Helper()
	if resp.Code != status {
		t.Fatalf("status %d, want %d: %s", resp.Code, status, resp.Body)
	}
	if status >= 400 {
		var p problemDoc
		if ct := resp.Header().Get("Content-Type"); ct != "application/problem+json" ||
			json.Unmarshal(resp.Body.Bytes(), &p) != nil || (code != "" && p.Code != code) {
			t.Fatalf("problem %s %s, want code %q", ct, resp.Body, code)
		}
		if out != nil {
			*(out.(*problemDoc)) = p
		}
		return
	}
	if cc := resp.Header().Get("Cache-Control"); cc != "private, no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero() // decode into a clean value, never on top of an earlier answer
		if err := json.Unmarshal(resp.Body.Bytes(), out); err != nil {
			t.Fatalf("decode %s: %v", resp.Body, err)
		}
	}
}

func with(headers []any, more ...any) []any { return append(append([]any{}, headers...), more...) }

var png = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"), bytes.Repeat([]byte{7}, 200)...)

var pdf = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// multipartBody is a form with one part named field.
func multipartBody(t *testing.T, field, name string, content []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, "Content-Type: " + w.FormDataContentType()
}

func TestEndpointsNeedASession(t *testing.T) {
	t.Parallel()
	b := startBFF(t, openStore(t, store.DefaultConfig(t.TempDir())), t.TempDir())
	alice := b.signUp("alice")
	reads := []string{"/api/v1/me", "/api/v1/me/profile", "/api/v1/me/favorites", "/api/v1/me/favorites/binance/SPOT/BTCUSDT",
		"/api/v1/me/preferences", "/api/v1/me/security", "/api/v1/me/kyc", "/api/v1/me/referral", "/api/v1/accounts"}
	for _, p := range reads {
		expect(t, b.api.Get(p), http.StatusUnauthorized, "unauthorized", nil)
		expect(t, b.api.Get(p, "Cookie: exhub_session=forged"), http.StatusUnauthorized, "unauthorized", nil)
	}
	type write struct {
		method, path string
		body         any
	}
	writes := []write{
		{http.MethodPatch, "/api/v1/me/profile", map[string]any{"nickname": "x"}},
		{http.MethodPost, "/api/v1/me/favorites", map[string]any{"exchange": "binance", "market_type": "SPOT", "symbol": "BTCUSDT"}},
		{http.MethodDelete, "/api/v1/me/favorites?exchange=binance&market_type=SPOT&symbol=BTCUSDT", nil},
		{http.MethodPost, "/api/v1/me/favorites:merge", map[string]any{"favorites": []any{}}},
		{http.MethodPut, "/api/v1/me/preferences", map[string]any{"version": 0, "preferences": map[string]any{}}},
		{http.MethodPost, "/api/v1/me/kyc", map[string]any{"kind": "person"}},
		{http.MethodPost, "/api/v1/me/kyc/documents", nil},
		{http.MethodPost, "/api/v1/me/kyc/submit", nil},
		{http.MethodPost, "/api/v1/accounts", map[string]any{"exchange": "okx", "api_key": "k", "api_secret": "s"}},
		{http.MethodDelete, "/api/v1/accounts/some-id", nil},
	}
	for _, w := range writes {
		args := []any{origin}
		if w.body != nil {
			args = append(args, w.body)
		}
		expect(t, b.api.Do(w.method, w.path, args...), http.StatusUnauthorized, "unauthorized", nil)
		// A session without the CSRF token: 403 before anything changes.
		args = []any{origin, alice.read()}
		if w.body != nil {
			args = append(args, w.body)
		}
		expect(t, b.api.Do(w.method, w.path, args...), http.StatusForbidden, "csrf_refused", nil)
		// Another origin.
		args = with(alice.write()[:2], "Origin: https://evil.example")
		if w.body != nil {
			args = append(args, w.body)
		}
		expect(t, b.api.Do(w.method, w.path, args...), http.StatusForbidden, "origin_refused", nil)
	}
	// Nothing was written for alice by the refused calls.
	if favs, _ := b.st.ListFavorites(context.Background(), alice.id()); len(favs) != 0 {
		t.Fatalf("refused calls wrote favorites: %v", favs)
	}
	// OpenAPI: every route tagged account (the exchange accounts: accounts) and needing the session scheme.
	n := 0
	for path, item := range b.api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			n++
			tag := account.Tag
			if strings.HasPrefix(path, "/api/v1/accounts") {
				tag = account.AccountsTag
			}
			if len(op.Tags) != 1 || op.Tags[0] != tag || len(op.Security) != 1 || op.OperationID == "" {
				t.Errorf("%s %s: tags %v security %v id %q", op.Method, path, op.Tags, op.Security, op.OperationID)
			}
		}
	}
	if n != 19 {
		t.Errorf("%d operations", n)
	}
}

func TestProfileFavoritesPreferencesAreOwn(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st *store.Store, dataDir string) {
		b := startBFF(t, st, dataDir)
		alice, bob := b.signUp("alice"), b.signUp("bob")

		// Profile.
		expect(t, b.api.Patch("/api/v1/me/profile", with(alice.write(), map[string]any{"nickname": ""})...), 422, "", nil)
		expect(t, b.api.Patch("/api/v1/me/profile", with(alice.write(), map[string]any{"nickname": strings.Repeat("x", 33)})...), 422, "", nil)
		expect(t, b.api.Patch("/api/v1/me/profile", with(alice.write(), map[string]any{"nickname": " padded "})...), 422, "invalid", nil)
		var me account.Me
		expect(t, b.api.Patch("/api/v1/me/profile", with(alice.write(), map[string]any{"nickname": "アリス", "locale": "ja-JP"})...), 200, "", &me)
		if me.Nickname != "アリス" || me.Locale != "ja-JP" || me.ID != alice.id() {
			t.Fatalf("patched %+v", me)
		}
		expect(t, b.api.Get("/api/v1/me/profile", bob.read()), 200, "", &me)
		if me.Nickname != "bob" || me.ID != bob.id() {
			t.Fatalf("bob sees %+v", me)
		}
		expect(t, b.api.Get("/api/v1/me", alice.read()), 200, "", &me)
		if me.Nickname != "アリス" {
			t.Fatalf("me after patch %+v", me)
		}

		// Favorites: add is idempotent, another member's list is separate, "/" in a symbol travels as %2F.
		btc := map[string]any{"exchange": "binance", "market_type": "SPOT", "symbol": "BTCUSDT"}
		var ch account.FavoriteChange
		expect(t, b.api.Post("/api/v1/me/favorites", with(alice.write(), btc)...), 200, "", &ch)
		if !ch.Changed {
			t.Fatal("first add not a change")
		}
		expect(t, b.api.Post("/api/v1/me/favorites", with(alice.write(), btc)...), 200, "", &ch)
		if ch.Changed {
			t.Fatal("second add changed")
		}
		expect(t, b.api.Post("/api/v1/me/favorites", with(alice.write(), map[string]any{"exchange": "okx", "market_type": "SWAP", "symbol": "BTC-USDT/SWAP"})...), 200, "", nil)
		expect(t, b.api.Post("/api/v1/me/favorites", with(alice.write(), map[string]any{"exchange": "Bin ance", "market_type": "SPOT", "symbol": "X"})...), 422, "", nil)
		expect(t, b.api.Post("/api/v1/me/favorites", with(alice.write(), map[string]any{"exchange": "binance", "market_type": "FUTURES", "symbol": "X"})...), 422, "", nil)
		var ex account.FavoriteExists
		expect(t, b.api.Get("/api/v1/me/favorites/okx/SWAP/BTC-USDT%2FSWAP", alice.read()), 200, "", &ex)
		if !ex.Exists {
			t.Fatal("alice's okx favorite missing")
		}
		expect(t, b.api.Get("/api/v1/me/favorites/binance/SPOT/BTCUSDT", bob.read()), 200, "", &ex)
		if ex.Exists {
			t.Fatal("bob sees alice's favorite")
		}
		var favs account.Favorites
		expect(t, b.api.Get("/api/v1/me/favorites", bob.read()), 200, "", &favs)
		if len(favs.Favorites) != 0 {
			t.Fatalf("bob's favorites %+v", favs)
		}
		// Bob deleting alice's market changes nothing for her.
		expect(t, b.api.Delete("/api/v1/me/favorites?exchange=binance&market_type=SPOT&symbol=BTCUSDT", bob.write()...), 200, "", &ch)
		if ch.Changed {
			t.Fatal("bob removed something")
		}
		// Merge of the browser's list: one new, one present, order kept.
		var mr account.MergeResult
		expect(t, b.api.Post("/api/v1/me/favorites:merge", with(alice.write(), map[string]any{"favorites": []any{
			map[string]any{"exchange": "binance", "market_type": "SWAP", "symbol": "ETHUSDT"}, btc}})...), 200, "", &mr)
		if mr.Added != 1 || mr.Present != 1 || len(mr.Favorites) != 3 || mr.Favorites[2].Symbol != "ETHUSDT" {
			t.Fatalf("merge %+v", mr)
		}
		expect(t, b.api.Delete("/api/v1/me/favorites?exchange=binance&market_type=SPOT&symbol=BTCUSDT", alice.write()...), 200, "", &ch)
		if !ch.Changed {
			t.Fatal("alice's delete changed nothing")
		}
		expect(t, b.api.Get("/api/v1/me/favorites", alice.read()), 200, "", &favs)
		if len(favs.Favorites) != 2 || favs.Favorites[0].Exchange != "okx" || favs.Favorites[0].MarketType != "SWAP" {
			t.Fatalf("alice's favorites %+v", favs)
		}

		// Preferences: versions as ETags, If-Match required, stale writes 412, another member's versions separate.
		var p account.Preferences
		resp := b.api.Get("/api/v1/me/preferences", alice.read())
		expect(t, resp, 200, "", &p)
		if p.Version != 0 || resp.Header().Get("ETag") != `"v0"` {
			t.Fatalf("fresh preferences %+v %q", p, resp.Header().Get("ETag"))
		}
		doc := map[string]any{"theme": "light", "language": "ja", "sound_volume": "0.35",
			"alerts": map[string]any{"price": true}, "sub_pages": map[string]any{"dashboard": "security"}}
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), map[string]any{"preferences": doc})...), 428, "precondition_required", nil)
		resp = b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v0"`, map[string]any{"preferences": doc})...)
		expect(t, resp, 200, "", &p)
		if p.Version != 1 || resp.Header().Get("ETag") != `"v1"` || p.Preferences.SoundVolume != "0.35" || p.Preferences.Theme != "light" {
			t.Fatalf("saved %+v", p)
		}
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v0"`, map[string]any{"preferences": doc})...), 412, "precondition_failed", nil)
		bad := map[string]any{"sound_volume": "1.5"}
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v1"`, map[string]any{"preferences": bad})...), 422, "", nil)
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), map[string]any{"version": 1, "preferences": map[string]any{"theme": "dark"}})...), 200, "", &p)
		if p.Version != 2 || p.Preferences.Theme != "dark" || p.Preferences.SoundVolume != "" {
			t.Fatalf("put by body version %+v", p)
		}
		// The trade screen's layout: chart type Bars (0) and no indicators are kept, not dropped as empty.
		tradeDoc := map[string]any{"theme": "dark", "trade": map[string]any{"chart_type": 0, "interval": "4h", "indicators": []string{}, "positions_all": true, "depth_steps": 10}}
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v2"`, map[string]any{"preferences": tradeDoc})...), 200, "", &p)
		if tr := p.Preferences.Trade; p.Version != 3 || tr == nil || tr.ChartType == nil || *tr.ChartType != 0 || tr.Interval != "4h" ||
			tr.Indicators == nil || len(*tr.Indicators) != 0 || !tr.PositionsAll || tr.DepthSteps != 10 {
			t.Fatalf("trade layout %+v", p.Preferences.Trade)
		}
		for _, badTrade := range []map[string]any{{"chart_type": 99}, {"indicators": []string{""}}, {"layout": "x"}, {"depth_steps": 7}} {
			expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v3"`, map[string]any{"preferences": map[string]any{"trade": badTrade}})...), 422, "", nil)
		}
		expect(t, b.api.Put("/api/v1/me/preferences", with(alice.write(), `If-Match: "v3"`, map[string]any{"preferences": map[string]any{"theme": "dark"}})...), 200, "", &p)
		if p.Version != 4 || p.Preferences.Trade != nil {
			t.Fatalf("after dropping the trade layout %+v", p)
		}
		resp = b.api.Get("/api/v1/me/preferences", bob.read())
		expect(t, resp, 200, "", &p)
		if p.Version != 0 || p.Preferences.Theme != "" {
			t.Fatalf("bob sees %+v", p)
		}
		// Bob's write with alice's version is stale for his own document, and never reaches hers.
		expect(t, b.api.Put("/api/v1/me/preferences", with(bob.write(), `If-Match: "v2"`, map[string]any{"preferences": doc})...), 412, "", nil)
		expect(t, b.api.Get("/api/v1/me/preferences", alice.read()), 200, "", &p)
		if p.Version != 4 || p.Preferences.Theme != "dark" {
			t.Fatalf("alice's preferences after bob: %+v", p)
		}

		// Security: no events, no lockout.
		var sec account.Security
		expect(t, b.api.Get("/api/v1/me/security", alice.read()), 200, "", &sec)
		if sec.WithdrawLocked || len(sec.Events) != 0 || sec.TwoFactor.TOTP {
			t.Fatalf("security %+v", sec)
		}
	})
}

func TestKYCAndReferral(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st *store.Store, dataDir string) {
		b := startBFF(t, st, dataDir)
		alice := b.signUp("alice")
		aliceID := alice.id()
		var k account.KYC
		expect(t, b.api.Get("/api/v1/me/kyc", alice.read()), 200, "", &k)
		if k.State != "none" || len(k.Exchanges) != 2 || k.Exchanges[0] != (account.ExchangeKYC{Exchange: "binance"}) ||
			k.MaxFileBytes != kyc.MaxDocumentBytes {
			t.Fatalf("fresh kyc %+v", k)
		}
		upload := func(s *session, name string, content []byte) *httptest.ResponseRecorder {
			body, ct := multipartBody(t, "file", name, content)
			return b.api.Post("/api/v1/me/kyc/documents", with(s.write(), ct, body)...)
		}
		expect(t, upload(alice, "id.png", png), 404, "not_found", nil)
		expect(t, b.api.Post("/api/v1/me/kyc", with(alice.write(), map[string]any{"kind": "robot"})...), 422, "", nil)
		expect(t, b.api.Post("/api/v1/me/kyc", with(alice.write(), map[string]any{"kind": "person"})...), 200, "", &k)
		if k.State != "pending" || k.Kind != "person" || k.ApplicationID == "" {
			t.Fatalf("started %+v", k)
		}
		expect(t, b.api.Post("/api/v1/me/kyc", with(alice.write(), map[string]any{"kind": "company"})...), 409, "conflict", nil)
		expect(t, b.api.Post("/api/v1/me/kyc/submit", alice.write()...), 409, "invalid_state", nil) // no document yet

		// A PNG under a hostile name: stored with a random name in the member's directory, the label stripped.
		var doc account.KYCDocument
		expect(t, upload(alice, "../../etc/passport.png", png), 201, "", &doc)
		sum := sha256.Sum256(png)
		if doc.ContentType != "image/png" || doc.Size != int64(len(png)) || doc.SHA256 != hex.EncodeToString(sum[:]) ||
			doc.FileName != "passport.png" {
			t.Fatalf("document %+v", doc)
		}
		files, err := os.ReadDir(filepath.Join(dataDir, "kyc", aliceID))
		if err != nil || len(files) != 1 || strings.Contains(files[0].Name(), "passport") || !strings.HasSuffix(files[0].Name(), ".png") {
			t.Fatalf("stored files %v %v", files, err)
		}
		if raw, err := os.ReadFile(filepath.Join(dataDir, "kyc", aliceID, files[0].Name())); err != nil || !bytes.Equal(raw, png) {
			t.Fatalf("stored content differs: %v", err)
		}
		if info, _ := files[0].Info(); info.Mode().Perm() != 0o600 {
			t.Fatalf("file mode %v", info.Mode())
		}
		// Content decides, not the name: a PDF named .jpg is a PDF; text named .png is refused.
		expect(t, upload(alice, "scan.jpg", pdf), 201, "", &doc)
		if doc.ContentType != "application/pdf" {
			t.Fatalf("pdf sniffed as %s", doc.ContentType)
		}
		expect(t, upload(alice, "evil.png", []byte("<html><script>alert(1)</script></html>")), 415, "unsupported_document_type", nil)
		expect(t, upload(alice, "x.png", append(append([]byte{}, png...), make([]byte, 0)...)[:8]), 201, "", nil) // a PNG signature alone is a PNG
		// Over 5 MB: 413 with the spec's message (the part's size, then the request's length).
		var p problemDoc
		big := append(append([]byte{}, png...), make([]byte, kyc.MaxDocumentBytes)...)
		expect(t, upload(alice, "big.png", big), 413, "attachment_too_large", &p)
		if p.Detail != "The attachment size exceeds the limit (maximum 5MB)" {
			t.Fatalf("413 detail %q", p.Detail)
		}
		exact := append(append([]byte{}, png...), make([]byte, kyc.MaxDocumentBytes-len(png))...)
		// The limit is inclusive, but alice has 3 documents already (the test's maximum): 422.
		expect(t, upload(alice, "exact.png", exact), 422, "limit_reached", nil)
		// A body streamed without a length is cut at the limit too (real listener, chunked).
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			part, _ := mw.CreateFormFile("file", "stream.png")
			_, _ = part.Write(png)
			_, _ = part.Write(make([]byte, kyc.MaxDocumentBytes+200_000))
			_ = mw.Close()
			_ = pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, b.url+"/api/v1/me/kyc/documents", pr)
		for _, h := range alice.write() {
			k, v, _ := strings.Cut(h.(string), ": ")
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		pr.CloseWithError(io.ErrClosedPipe)
		if res.StatusCode != 413 || !strings.Contains(string(raw), "The attachment size exceeds the limit (maximum 5MB)") {
			t.Fatalf("streamed upload: %d %s", res.StatusCode, raw)
		}
		expect(t, b.api.Get("/api/v1/me/kyc", alice.read()), 200, "", &k)
		if len(k.Documents) != 3 {
			t.Fatalf("documents %+v", k.Documents)
		}

		// Bob never sees or adds to alice's application.
		bob := b.signUpWith(map[string]any{"nickname": "bob", "referral_code": b.row(aliceID).ReferralCode})
		expect(t, b.api.Get("/api/v1/me/kyc", bob.read()), 200, "", &k)
		if k.State != "none" || len(k.Documents) != 0 {
			t.Fatalf("bob's kyc %+v", k)
		}
		expect(t, upload(bob, "id.png", png), 404, "not_found", nil)
		expect(t, b.api.Post("/api/v1/me/kyc/submit", bob.write()...), 404, "not_found", nil)

		// Submit, then documents are closed; the operator approves; flags per exchange follow.
		expect(t, b.api.Post("/api/v1/me/kyc/submit", alice.write()...), 200, "", &k)
		if k.State != "in_review" {
			t.Fatalf("submitted %+v", k)
		}
		expect(t, upload(alice, "late.png", png), 409, "invalid_state", nil)
		if _, err := b.kyc.Approve(context.Background(), k.ApplicationID, "ops"); err != nil {
			t.Fatal(err)
		}
		var me account.Me
		expect(t, b.api.Get("/api/v1/me", alice.read()), 200, "", &me)
		expect(t, b.api.Get("/api/v1/me/kyc", alice.read()), 200, "", &k)
		if me.KYCState != "completed" || k.State != "completed" || k.ReviewedAt == nil ||
			fmt.Sprint(k.Exchanges) != "[{binance true} {okx true}]" {
			t.Fatalf("after approval: me %s, kyc %+v", me.KYCState, k)
		}

		// Referral: bob signed up with alice's code; a reward from bob's fees shows as decimal strings.
		if _, err := b.members.Ensure(context.Background(), mustMember(t, b, bob)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddReward(context.Background(), store.Reward{MemberID: aliceID, RefereeID: bob.id(),
			Amount: decimal.RequireFromString("1.50000001"), Coin: "USDT", SourceRef: "trade-1"}); err != nil {
			t.Fatal(err)
		}
		var ref account.Referral
		expect(t, b.api.Get("/api/v1/me/referral", alice.read()), 200, "", &ref)
		if ref.Code != b.row(aliceID).ReferralCode || len(ref.Referees) != 1 || ref.Referees[0].Nickname != "bob" ||
			len(ref.Totals) != 1 || ref.Totals[0] != (account.RewardTotal{Coin: "USDT", Settled: "0", Unsettled: "1.50000001"}) ||
			len(ref.Rewards) != 1 || ref.Rewards[0].Amount != "1.50000001" || ref.Rewards[0].State != "unsettled" {
			t.Fatalf("alice's referral %+v", ref)
		}
		expect(t, b.api.Get("/api/v1/me/referral", bob.read()), 200, "", &ref)
		if ref.Code == b.row(aliceID).ReferralCode || len(ref.Referees) != 0 || len(ref.Totals) != 0 || len(ref.Rewards) != 0 {
			t.Fatalf("bob's referral %+v", ref)
		}
	})
}
