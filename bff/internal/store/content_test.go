package store

import (
	"strings"
	"testing"
	"time"
)

var contentT0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func ev(id, lang, title string, startDay, endDay int, pos int) Event {
	e := Event{ID: id, Lang: lang, Title: title, Body: "# " + title + "\n\nBody.", StartsAt: contentT0.AddDate(0, 0, startDay),
		Published: true, Position: pos, ImageURL: "/content/event.svg"}
	if endDay != 0 {
		e.EndsAt = contentT0.AddDate(0, 0, endDay)
	}
	return e
}

func ids[T any](list []T, id func(T) string) string {
	var out []string
	for _, x := range list {
		out = append(out, id(x))
	}
	return strings.Join(out, ",")
}

func evID(e Event) string { return e.ID + "/" + e.Lang }

func TestContentEvents(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		if empty, err := s.ContentEmpty(ctx); err != nil || !empty {
			t.Fatalf("empty %v %v", empty, err)
		}
		now := contentT0.AddDate(0, 0, 10)
		for _, e := range []Event{
			ev("running", "en", "Running", 5, 20, 2), ev("running", "ja", "開催中", 5, 20, 2),
			ev("upcoming", "en", "Upcoming", 15, 0, 1), // no ja: falls back to en
			ev("ended", "en", "Ended", 1, 3, 0), ev("ended", "ja", "終了", 1, 3, 0),
		} {
			if _, err := s.PutEvent(ctx, e); err != nil {
				t.Fatalf("put %s: %v", evID(e), err)
			}
		}
		hidden := ev("draft", "en", "Draft", 5, 0, 0)
		hidden.Published = false
		if _, err := s.PutEvent(ctx, hidden); err != nil {
			t.Fatal(err)
		}
		if empty, err := s.ContentEmpty(ctx); err != nil || empty {
			t.Fatalf("empty %v %v", empty, err)
		}

		list, total, err := s.PublicEvents(ctx, LangJA, EventsCurrent, now, 1, 10)
		if err != nil || total != 2 || ids(list, evID) != "upcoming/en,running/ja" {
			t.Fatalf("ja current: %s total %d %v", ids(list, evID), total, err)
		}
		list, total, err = s.PublicEvents(ctx, LangEN, EventsAll, now, 1, 10)
		if err != nil || total != 3 || ids(list, evID) != "upcoming/en,running/en,ended/en" {
			t.Fatalf("en all: %s total %d %v", ids(list, evID), total, err)
		}
		list, total, err = s.PublicEvents(ctx, LangEN, EventsAll, now, 2, 2)
		if err != nil || total != 3 || ids(list, evID) != "ended/en" {
			t.Fatalf("en all page 2: %s total %d %v", ids(list, evID), total, err)
		}
		list, _, err = s.PublicEvents(ctx, LangJA, EventsEnded, now, 1, 10)
		if err != nil || ids(list, evID) != "ended/ja" || list[0].Title != "終了" {
			t.Fatalf("ja ended: %+v %v", list, err)
		}

		e, err := s.PublicEvent(ctx, "upcoming", LangJA)
		if err != nil || e.Lang != "en" || e.Title != "Upcoming" || !e.EndsAt.IsZero() || !e.StartsAt.Equal(contentT0.AddDate(0, 0, 15)) {
			t.Fatalf("fallback detail %+v %v", e, err)
		}
		if _, err := s.PublicEvent(ctx, "draft", LangEN); err == nil {
			t.Fatal("an unpublished event is public")
		}
		_, err = s.PublicEvent(ctx, "nope", LangEN)
		wantErr(t, err, ErrNotFound)
		_, err = s.PublicEvent(ctx, "../x", LangEN)
		wantErr(t, err, ErrNotFound)

		// Replacing keeps one row; unpublish hides every language; delete removes.
		upd := ev("running", "ja", "開催中（更新）", 5, 20, 2)
		got, err := s.PutEvent(ctx, upd)
		if err != nil || got.Title != "開催中（更新）" {
			t.Fatalf("replace %+v %v", got, err)
		}
		all, err := s.AllEvents(ctx)
		if err != nil || len(all) != 6 {
			t.Fatalf("all %d %v", len(all), err)
		}
		if err := s.SetContentPublished(ctx, KindEvent, "running", false); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PublicEvent(ctx, "running", LangJA); err == nil {
			t.Fatal("unpublished event still public")
		}
		wantErr(t, s.SetContentPublished(ctx, KindEvent, "ghost", true), ErrNotFound)
		if err := s.DeleteContent(ctx, KindEvent, "running", LangJA); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteContent(ctx, KindEvent, "running", ""); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.DeleteContent(ctx, KindEvent, "running", ""), ErrNotFound)
		wantErr(t, s.DeleteContent(ctx, "poster", "x", ""), ErrInvalid)
	})
}

func TestContentValidation(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		good := ev("ok", "en", "OK", 0, 1, 0)
		for name, mut := range map[string]func(*Event){
			"id":          func(e *Event) { e.ID = "Bad ID" },
			"lang":        func(e *Event) { e.Lang = "ko" },
			"title":       func(e *Event) { e.Title = " " },
			"title ctl":   func(e *Event) { e.Title = "a\nb" },
			"long title":  func(e *Event) { e.Title = strings.Repeat("x", MaxContentTitle+1) },
			"image http":  func(e *Event) { e.ImageURL = "https://cdn.example/x.png" },
			"image proto": func(e *Event) { e.ImageURL = "//evil/x.png" },
			"image js":    func(e *Event) { e.ImageURL = "javascript:alert(1)" },
			"image html":  func(e *Event) { e.ImageURL = "data:text/html,<script>" },
			"no start":    func(e *Event) { e.StartsAt = time.Time{} },
			"end first":   func(e *Event) { e.EndsAt = e.StartsAt.Add(-time.Hour) },
		} {
			e := good
			mut(&e)
			if _, err := s.PutEvent(ctx, e); err == nil {
				t.Errorf("%s: accepted %+v", name, e)
			} else {
				wantErr(t, err, ErrInvalid)
			}
		}
		e := good
		e.ImageURL = "data:image/svg+xml;charset=utf-8,%3Csvg%3E%3C/svg%3E"
		if _, err := s.PutEvent(ctx, e); err != nil {
			t.Fatalf("data URI image: %v", err)
		}
		b := Banner{ID: "b", Lang: "en", Place: PlaceHome, Title: "B", ImageURL: "/content/b.svg", StartsAt: contentT0}
		for name, mut := range map[string]func(*Banner){
			"place":     func(b *Banner) { b.Place = "sidebar" },
			"no image":  func(b *Banner) { b.ImageURL = "" },
			"link js":   func(b *Banner) { b.Link = "javascript:alert(1)" },
			"link http": func(b *Banner) { b.Link = "http://example.com/" },
			"link user": func(b *Banner) { b.Link = "https://u:p@example.com/" },
		} {
			x := b
			mut(&x)
			_, err := s.PutBanner(ctx, x)
			wantErr(t, err, ErrInvalid)
			_ = name
		}
		a := Announcement{ID: "a", Lang: "en", Title: "A", Link: "", PublishedAt: contentT0}
		_, err := s.PutAnnouncement(ctx, a)
		wantErr(t, err, ErrInvalid)
	})
}

func TestContentBannersAndAnnouncements(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		now := contentT0.AddDate(0, 0, 10)
		put := func(b Banner) {
			t.Helper()
			if _, err := s.PutBanner(ctx, b); err != nil {
				t.Fatalf("put banner %s/%s: %v", b.ID, b.Lang, err)
			}
		}
		bn := func(id, lang, place string, pos, startDay, endDay int) Banner {
			b := Banner{ID: id, Lang: lang, Place: place, Title: id + " " + lang, ImageURL: "/content/" + id + ".svg",
				Link: "/event", StartsAt: contentT0.AddDate(0, 0, startDay), Published: true, Position: pos}
			if endDay != 0 {
				b.EndsAt = contentT0.AddDate(0, 0, endDay)
			}
			return b
		}
		put(bn("h1", "en", PlaceHome, 1, 0, 0))
		put(bn("h1", "ja", PlaceHome, 1, 0, 0))
		put(bn("h2", "en", PlaceHome, 2, 0, 30))
		put(bn("h3", "en", PlaceHome, 0, 11, 0)) // not started
		put(bn("h4", "en", PlaceHome, 0, 0, 9))  // over
		put(bn("e1", "en", PlaceEvents, 0, 0, 0))
		bid := func(b Banner) string { return b.ID + "/" + b.Lang }
		list, total, err := s.PublicBanners(ctx, PlaceHome, LangJA, now, 1, 2)
		if err != nil || total != 2 || ids(list, bid) != "h1/ja,h2/en" || list[1].Link != "/event" {
			t.Fatalf("home ja: %s %d %v", ids(list, bid), total, err)
		}
		list, _, err = s.PublicBanners(ctx, PlaceEvents, LangEN, now, 1, 2)
		if err != nil || ids(list, bid) != "e1/en" {
			t.Fatalf("events: %s %v", ids(list, bid), err)
		}
		if _, _, err := s.PublicBanners(ctx, "nowhere", LangEN, now, 1, 2); err == nil {
			t.Fatal("unknown place accepted")
		}
		if _, _, err := s.PublicBanners(ctx, PlaceHome, LangEN, now, 1, MaxContentPage+1); err == nil {
			t.Fatal("page size beyond the cap accepted")
		}
		all, err := s.AllBanners(ctx)
		if err != nil || len(all) != 6 {
			t.Fatalf("all banners %d %v", len(all), err)
		}

		an := func(id, lang string, day int) Announcement {
			return Announcement{ID: id, Lang: lang, Title: id + " " + lang, Link: "https://help.example.org/" + id,
				PublishedAt: contentT0.AddDate(0, 0, day), Published: true}
		}
		for _, a := range []Announcement{an("old", "en", 1), an("old", "ja", 1), an("new", "en", 5), an("future", "en", 12)} {
			if _, err := s.PutAnnouncement(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		aid := func(a Announcement) string { return a.ID + "/" + a.Lang }
		anns, err := s.PublicAnnouncements(ctx, LangJA, now, 10)
		if err != nil || ids(anns, aid) != "new/en,old/ja" {
			t.Fatalf("announcements ja: %s %v", ids(anns, aid), err)
		}
		if err := s.SetContentPublished(ctx, KindAnnouncement, "new", false); err != nil {
			t.Fatal(err)
		}
		anns, err = s.PublicAnnouncements(ctx, LangEN, now, 1)
		if err != nil || ids(anns, aid) != "old/en" {
			t.Fatalf("announcements en after unpublish: %s %v", ids(anns, aid), err)
		}
	})
}
