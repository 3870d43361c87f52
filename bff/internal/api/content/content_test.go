package content

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// engines runs fn on a seeded store on SQLite and on PostgreSQL.
func engines(t *testing.T, fn func(t *testing.T, api humatest.TestAPI, st *store.Store)) {
	t.Helper()
	open := func(t *testing.T, cfg store.Config) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		st, err := store.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		seeded, err := SeedDemo(ctx, st, now)
		if err != nil || !seeded {
			t.Fatalf("seed: %v %v", seeded, err)
		}
		// A second start seeds nothing.
		if again, err := SeedDemo(ctx, st, now); err != nil || again {
			t.Fatalf("second seed: %v %v", again, err)
		}
		_, api := humatest.New(t)
		Register(api, Deps{Store: st, Now: func() time.Time { return now }})
		fn(t, api, st)
	}
	t.Run("sqlite", func(t *testing.T) { open(t, store.DefaultConfig(t.TempDir())) })
	t.Run("postgres", func(t *testing.T) {
		cfg := store.DefaultConfig(t.TempDir())
		cfg.Driver = store.DriverPostgres
		cfg.DSN = secret.New(storetest.Postgres(t))
		open(t, cfg)
	})
}

func get[T any](t *testing.T, api humatest.TestAPI, path string, want int) T {
	t.Helper()
	resp := api.Get(path)
	if resp.Code != want {
		t.Fatalf("GET %s: %d %s", path, resp.Code, resp.Body.String())
	}
	var out T
	if want == http.StatusOK {
		if cc := resp.Header().Get("Cache-Control"); cc != CacheContent {
			t.Fatalf("GET %s: Cache-Control %q", path, cc)
		}
		if err := json.Unmarshal(resp.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
	} else if ct := resp.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("GET %s: content type %q", path, ct)
	}
	return out
}

func TestEvents(t *testing.T) {
	engines(t, func(t *testing.T, api humatest.TestAPI, st *store.Store) {
		p := get[ContentPage[ContentEvent]](t, api, "/api/v1/content/events", http.StatusOK)
		if p.Total != 2 || len(p.List) != 2 || p.List[0].ID != "trading-cup" || p.List[0].Status != "ongoing" ||
			p.List[1].ID != "spot-zero-fee" || p.List[1].Status != "upcoming" || p.List[0].Lang != "en" {
			t.Fatalf("current events %+v", p)
		}
		p = get[ContentPage[ContentEvent]](t, api, "/api/v1/content/events?lang=ja&status=all&page=2&page_size=2", http.StatusOK)
		if p.Total != 3 || p.Page != 2 || len(p.List) != 1 || p.List[0].ID != "welcome-bonus" || p.List[0].Status != "ended" ||
			p.List[0].Title != "新規登録ボーナス" || p.List[0].EndsAt == nil {
			t.Fatalf("ja page 2 %+v", p)
		}
		d := get[ContentEventDetail](t, api, "/api/v1/content/events/trading-cup?lang=ja", http.StatusOK)
		if d.Lang != "ja" || !strings.Contains(d.Body, "## 参加方法") || d.ImageURL != "/content/trading-cup.svg" {
			t.Fatalf("detail %+v", d)
		}
		// An event with no Japanese version comes in English.
		if _, err := st.PutEvent(context.Background(), store.Event{ID: "en-only", Lang: "en", Title: "English only",
			StartsAt: now, Published: true}); err != nil {
			t.Fatal(err)
		}
		d = get[ContentEventDetail](t, api, "/api/v1/content/events/en-only?lang=ja", http.StatusOK)
		if d.Lang != "en" || d.Title != "English only" || d.Status != "ongoing" {
			t.Fatalf("fallback %+v", d)
		}
		get[struct{}](t, api, "/api/v1/content/events/no-such-event", http.StatusNotFound)
		if err := st.SetContentPublished(context.Background(), store.KindEvent, "trading-cup", false); err != nil {
			t.Fatal(err)
		}
		get[struct{}](t, api, "/api/v1/content/events/trading-cup", http.StatusNotFound)
		get[struct{}](t, api, "/api/v1/content/events?lang=ko", http.StatusUnprocessableEntity)
		get[struct{}](t, api, "/api/v1/content/events?page_size=51", http.StatusUnprocessableEntity)
		get[struct{}](t, api, "/api/v1/content/events?status=soon", http.StatusUnprocessableEntity)
	})
}

func TestBannersAndAnnouncements(t *testing.T) {
	engines(t, func(t *testing.T, api humatest.TestAPI, _ *store.Store) {
		p := get[ContentPage[ContentBanner]](t, api, "/api/v1/content/banners?place=home&page=1&page_size=2&lang=ja", http.StatusOK)
		if p.Total != 2 || len(p.List) != 2 || p.List[0].ID != "home-trading-cup" || p.List[0].Lang != "ja" ||
			p.List[0].Link != "/eventDetail/trading-cup" || p.List[1].ImageURL != "/content/banner-markets.svg" {
			t.Fatalf("home banners %+v", p)
		}
		p = get[ContentPage[ContentBanner]](t, api, "/api/v1/content/banners?place=events", http.StatusOK)
		if p.Total != 1 || p.List[0].Place != "events" || p.PageSize != 2 {
			t.Fatalf("events banners %+v", p)
		}
		get[struct{}](t, api, "/api/v1/content/banners?place=side", http.StatusUnprocessableEntity)
		a := get[ContentAnnouncements](t, api, "/api/v1/content/announcements?lang=ja&limit=2", http.StatusOK)
		if len(a.List) != 2 || a.List[0].ID != "maintenance" || a.List[1].ID != "trading-cup-rules" ||
			a.List[0].Link != HelpCenterURL || !strings.Contains(a.List[0].Title, "メンテナンス") {
			t.Fatalf("announcements %+v", a)
		}
	})
}

func TestNoStore(t *testing.T) {
	_, api := humatest.New(t)
	Register(api, Deps{})
	resp := api.Get("/api/v1/content/events")
	if resp.Code != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", resp.Code, resp.Body.String())
	}
}
