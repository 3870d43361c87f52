// Package content serves the public content routes (OpenAPI tag "content"): events, banners (the home carousel and
// the events page's banner) and announcements, as the operator published them with exhub-admin content. Every
// answer is public and cacheable (the edge caches /api/v1/content/*), so nothing depends on who asks: the language
// is a query parameter, never a cookie or a header.
package content

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/store"
)

// Tag is the OpenAPI tag of the content routes.
const Tag = "content"

// CacheContent is the Cache-Control of every content answer: content changes rarely, and a change (or a banner's
// window opening) shows within a minute.
const CacheContent = "public, max-age=60, stale-while-revalidate=300"

// Store is what the routes read; *store.Store is one.
type Store interface {
	PublicEvents(ctx context.Context, lang, window string, now time.Time, page, pageSize int) ([]store.Event, int, error)
	PublicEvent(ctx context.Context, id, lang string) (store.Event, error)
	PublicBanners(ctx context.Context, place, lang string, now time.Time, page, pageSize int) ([]store.Banner, int, error)
	PublicAnnouncements(ctx context.Context, lang string, now time.Time, limit int) ([]store.Announcement, error)
}

// Deps are the content routes' collaborators.
type Deps struct {
	// Store holds the content; nil answers 503.
	Store Store
	// Now is the clock of the time windows (nil: time.Now).
	Now func() time.Time
	// Logger logs failures the client only sees as a 500.
	Logger *slog.Logger
}

type routes struct {
	Deps
}

// ContentEvent is one event in the reader's language (or English when it has no version in that language).
type ContentEvent struct {
	ID       string     `json:"id" example:"trading-cup-2026"`
	Lang     string     `json:"lang" enum:"en,ja" doc:"The language of this version: the one asked, or en as the fallback"`
	Title    string     `json:"title"`
	Summary  string     `json:"summary" doc:"One line for the list's card; may be empty"`
	ImageURL string     `json:"image_url" doc:"A path on this site or a data:image URI; may be empty"`
	StartsAt time.Time  `json:"starts_at"`
	EndsAt   *time.Time `json:"ends_at,omitempty" doc:"Absent: open-ended"`
	Status   string     `json:"status" enum:"upcoming,ongoing,ended" doc:"Where now is in the event's period"`
}

// ContentEventDetail is an event with its body.
type ContentEventDetail struct {
	ContentEvent
	Body string `json:"body" doc:"Plain text or a small Markdown subset (headings, lists, emphasis, links). Show it as text: it is never HTML."`
}

// ContentBanner is a banner in the reader's language.
type ContentBanner struct {
	ID       string `json:"id"`
	Lang     string `json:"lang" enum:"en,ja"`
	Place    string `json:"place" enum:"home,events"`
	Title    string `json:"title" doc:"The banner's text, shown over its image (the image carries no text)"`
	ImageURL string `json:"image_url" doc:"A path on this site or a data:image URI"`
	Link     string `json:"link" doc:"Where a click goes: a path on this site, an https URL, or empty for none"`
}

// ContentAnnouncement is a notice that links to the help center.
type ContentAnnouncement struct {
	ID          string    `json:"id"`
	Lang        string    `json:"lang" enum:"en,ja"`
	Title       string    `json:"title"`
	Link        string    `json:"link" doc:"The help center page: a path on this site or an https URL"`
	PublishedAt time.Time `json:"published_at"`
}

// Page is one page of a list.
type ContentPage[T any] struct {
	Page     int `json:"page" doc:"The page asked, from 1"`
	PageSize int `json:"page_size" doc:"The page size asked"`
	Total    int `json:"total" doc:"Items across all pages"`
	List     []T `json:"list"`
}

type reply[T any] struct {
	CacheControl string `header:"Cache-Control" doc:"Public: the edge and browsers may cache the answer."`
	Body         T
}

func ok[T any](b T) *reply[T] { return &reply[T]{CacheControl: CacheContent, Body: b} }

// LangQuery is the reader's language.
type LangQuery struct {
	Lang string `query:"lang" enum:"en,ja" default:"en" doc:"The reader's language; an item without a version in it comes in English"`
}

// EventsInput are the event list's parameters.
type EventsInput struct {
	LangQuery
	Status   string `query:"status" enum:"current,ended,all" default:"current" doc:"current: not ended yet (ongoing and upcoming); ended; all (not ended first)"`
	Page     int    `query:"page" minimum:"1" maximum:"100000" default:"1"`
	PageSize int    `query:"page_size" minimum:"1" maximum:"50" default:"12"`
}

// EventInput names one event.
type EventInput struct {
	LangQuery
	ID string `path:"id" maxLength:"64" doc:"The event id"`
}

// BannersInput are the banner list's parameters.
type BannersInput struct {
	LangQuery
	Place    string `query:"place" enum:"home,events" default:"home" doc:"home: the home page's carousel; events: the banner on top of the events page"`
	Page     int    `query:"page" minimum:"1" maximum:"100000" default:"1"`
	PageSize int    `query:"page_size" minimum:"1" maximum:"50" default:"2" doc:"The product asks for 2 banners per page (the spec's GetBanner: page and pageSize, 2 items)"`
}

// AnnouncementsInput are the announcement list's parameters.
type AnnouncementsInput struct {
	LangQuery
	Limit int `query:"limit" minimum:"1" maximum:"50" default:"5"`
}

// Register adds the content routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	r := &routes{Deps: d}
	huma.Register(api, op("list-events", "/api/v1/content/events", "Events",
		"Published events in the reader's language (English where an event has no version in it), by the operator's "+
			"order; not-ended events first. Paged: page from 1, page_size up to 50. Public and cached (Cache-Control: "+
			CacheContent+").", http.StatusUnprocessableEntity), r.events)
	huma.Register(api, op("get-event", "/api/v1/content/events/{id}", "One event",
		"A published event with its body, in the reader's language or English; ended events stay readable. 404 for an "+
			"unknown or unpublished id.", http.StatusNotFound, http.StatusUnprocessableEntity), r.event)
	huma.Register(api, op("list-banners", "/api/v1/content/banners", "Banners",
		"The banners of a place whose display window holds now, by the operator's order, in the reader's language "+
			"(English fallback per banner). The shape of the product's GetBanner: page and page_size (the home carousel "+
			"asks for page 1 with 2 items) and the items in list.", http.StatusUnprocessableEntity), r.banners)
	huma.Register(api, op("list-announcements", "/api/v1/content/announcements", "Announcements",
		"Published announcements, newest first, each linking to its help center page, in the reader's language "+
			"(English fallback).", http.StatusUnprocessableEntity), r.announcements)
}

func op(id, path, summary, description string, errs ...int) huma.Operation {
	return huma.Operation{OperationID: id, Method: http.MethodGet, Path: path, Summary: summary, Description: description,
		Tags: []string{Tag}, Errors: append(errs, http.StatusServiceUnavailable)}
}

func (r *routes) fail(what string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return huma.Error404NotFound(what + " not found")
	case errors.Is(err, store.ErrInvalid):
		return huma.Error422UnprocessableEntity(err.Error())
	}
	r.Logger.Error("content read failed", "what", what, "err", err)
	return apiutil.Error("reading "+what+" failed", err)
}

func (r *routes) store() (Store, error) {
	if r.Store == nil {
		return nil, huma.Error503ServiceUnavailable("content is not available on this server")
	}
	return r.Store, nil
}

func eventOf(e store.Event, now time.Time) ContentEvent {
	out := ContentEvent{ID: e.ID, Lang: e.Lang, Title: e.Title, Summary: e.Summary, ImageURL: e.ImageURL,
		StartsAt: e.StartsAt.UTC(), Status: "ongoing"}
	if !e.EndsAt.IsZero() {
		t := e.EndsAt.UTC()
		out.EndsAt = &t
	}
	switch {
	case now.Before(e.StartsAt):
		out.Status = "upcoming"
	case !e.EndsAt.IsZero() && !now.Before(e.EndsAt):
		out.Status = "ended"
	}
	return out
}

func (r *routes) events(ctx context.Context, in *EventsInput) (*reply[ContentPage[ContentEvent]], error) {
	st, err := r.store()
	if err != nil {
		return nil, err
	}
	now := r.Now()
	list, total, err := st.PublicEvents(ctx, in.Lang, in.Status, now, in.Page, in.PageSize)
	if err != nil {
		return nil, r.fail("events", err)
	}
	out := ContentPage[ContentEvent]{Page: in.Page, PageSize: in.PageSize, Total: total, List: make([]ContentEvent, 0, len(list))}
	for _, e := range list {
		out.List = append(out.List, eventOf(e, now))
	}
	return ok(out), nil
}

func (r *routes) event(ctx context.Context, in *EventInput) (*reply[ContentEventDetail], error) {
	st, err := r.store()
	if err != nil {
		return nil, err
	}
	e, err := st.PublicEvent(ctx, in.ID, in.Lang)
	if err != nil {
		return nil, r.fail("event", err)
	}
	return ok(ContentEventDetail{ContentEvent: eventOf(e, r.Now()), Body: e.Body}), nil
}

func (r *routes) banners(ctx context.Context, in *BannersInput) (*reply[ContentPage[ContentBanner]], error) {
	st, err := r.store()
	if err != nil {
		return nil, err
	}
	list, total, err := st.PublicBanners(ctx, in.Place, in.Lang, r.Now(), in.Page, in.PageSize)
	if err != nil {
		return nil, r.fail("banners", err)
	}
	out := ContentPage[ContentBanner]{Page: in.Page, PageSize: in.PageSize, Total: total, List: make([]ContentBanner, 0, len(list))}
	for _, b := range list {
		out.List = append(out.List, ContentBanner{ID: b.ID, Lang: b.Lang, Place: b.Place, Title: b.Title, ImageURL: b.ImageURL,
			Link: b.Link})
	}
	return ok(out), nil
}

// ContentAnnouncements is the announcements answer.
type ContentAnnouncements struct {
	List []ContentAnnouncement `json:"list"`
}

func (r *routes) announcements(ctx context.Context, in *AnnouncementsInput) (*reply[ContentAnnouncements], error) {
	st, err := r.store()
	if err != nil {
		return nil, err
	}
	list, err := st.PublicAnnouncements(ctx, in.Lang, r.Now(), in.Limit)
	if err != nil {
		return nil, r.fail("announcements", err)
	}
	out := ContentAnnouncements{List: make([]ContentAnnouncement, 0, len(list))}
	for _, a := range list {
		out.List = append(out.List, ContentAnnouncement{ID: a.ID, Lang: a.Lang, Title: a.Title, Link: a.Link,
			PublishedAt: a.PublishedAt.UTC()})
	}
	return ok(out), nil
}
