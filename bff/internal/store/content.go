package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Content languages. A public read in a language falls back, item by item, to the English row.
const (
	LangEN = "en"
	LangJA = "ja"
)

// Banner places: the home page's carousel and the banner on top of the events page.
const (
	PlaceHome   = "home"
	PlaceEvents = "events"
)

// Content kinds (exhub-admin content ... and DeleteContent / SetContentPublished).
const (
	KindEvent        = "event"
	KindBanner       = "banner"
	KindAnnouncement = "announcement"
)

// Event list filters by time window.
const (
	EventsCurrent = "current" // not ended yet: running and upcoming
	EventsEnded   = "ended"
	EventsAll     = "all"
)

// Content limits.
const (
	MaxContentTitle   = 200
	MaxContentSummary = 500
	MaxContentBody    = 20000
	MaxContentLink    = 1000
	// MaxContentImage bounds an image URL; a data: URI of a small drawing fits.
	MaxContentImage = 200_000
	MaxContentPage  = 50
)

// Event is one language's version of an event (campaign, competition...).
type Event struct {
	ID       string
	Lang     string
	Title    string
	Summary  string // a line for the list's card
	ImageURL string // a same-origin path ("/content/x.svg") or a data:image URI
	Body     string // plain text or a small Markdown subset, rendered as text by the UI (never as HTML)
	StartsAt time.Time
	EndsAt   time.Time // zero: open-ended
	// Published items are public; Position orders them (lower first).
	Published bool
	Position  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Banner is one language's version of a banner shown in a place (home carousel, events page) between StartsAt and
// EndsAt.
type Banner struct {
	ID        string
	Lang      string
	Place     string
	Title     string // the banner's text, shown over its image
	ImageURL  string
	Link      string // "" (no link), a same-origin path or an https URL
	StartsAt  time.Time
	EndsAt    time.Time
	Published bool
	Position  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Announcement is one language's version of a notice linking to the help center; public from PublishedAt.
type Announcement struct {
	ID          string
	Lang        string
	Title       string
	Link        string
	PublishedAt time.Time
	Published   bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

var (
	contentIDRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	dataImageRe = regexp.MustCompile(`^data:image/(png|jpeg|gif|webp|svg\+xml)(;charset=[a-zA-Z0-9-]+)?(;base64)?,`)
)

// ValidContentID reports whether id can name a content item (lowercase letters, digits and dashes, 1-64).
func ValidContentID(id string) bool { return contentIDRe.MatchString(id) }

func checkLang(lang string) error {
	if lang != LangEN && lang != LangJA {
		return fmt.Errorf("%w: language %q (en or ja)", ErrInvalid, lang)
	}
	return nil
}

func checkText(field, v string, required bool, max int, multiline bool) error {
	if required && strings.TrimSpace(v) == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalid, field)
	}
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > max {
		return fmt.Errorf("%w: %s is longer than %d characters or not UTF-8", ErrInvalid, field, max)
	}
	for _, r := range v {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t' || r == '\r')) {
			return fmt.Errorf("%w: %s has a control character", ErrInvalid, field)
		}
	}
	return nil
}

// checkImage accepts a same-origin path or a data:image URI: the UI's Content-Security-Policy allows images from
// the site itself and data: URIs only.
func checkImage(field, v string, required bool) error {
	if v == "" {
		if required {
			return fmt.Errorf("%w: %s is empty", ErrInvalid, field)
		}
		return nil
	}
	if len(v) > MaxContentImage {
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalid, field, MaxContentImage)
	}
	if dataImageRe.MatchString(v) {
		return nil
	}
	if err := checkPath(v); err != nil {
		return fmt.Errorf("%w: %s must be a path on this site (/...) or a data:image URI", ErrInvalid, field)
	}
	return nil
}

// checkPath accepts an absolute path on this site ("/event", "/content/a.svg?x=1").
func checkPath(v string) error {
	if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.ContainsAny(v, "\\ \t\r\n") {
		return ErrInvalid
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return ErrInvalid
	}
	return nil
}

// checkLink accepts a same-origin path or an https URL (the help center, say).
func checkLink(field, v string, required bool) error {
	if v == "" {
		if required {
			return fmt.Errorf("%w: %s is empty", ErrInvalid, field)
		}
		return nil
	}
	if len(v) > MaxContentLink {
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalid, field, MaxContentLink)
	}
	if checkPath(v) == nil {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.ContainsAny(v, " \t\r\n") {
		return fmt.Errorf("%w: %s must be a path on this site (/...) or an https URL", ErrInvalid, field)
	}
	return nil
}

func checkWindow(starts, ends time.Time) error {
	if starts.IsZero() {
		return fmt.Errorf("%w: start time is missing", ErrInvalid)
	}
	if !ends.IsZero() && !ends.After(starts) {
		return fmt.Errorf("%w: end time is not after the start", ErrInvalid)
	}
	return nil
}

func checkID(id string) error {
	if !ValidContentID(id) {
		return fmt.Errorf("%w: content id %q (lowercase letters, digits and dashes, at most 64)", ErrInvalid, id)
	}
	return nil
}

func optMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return micros(t)
}

func (e Event) validate() error {
	for _, err := range []error{checkID(e.ID), checkLang(e.Lang), checkText("title", e.Title, true, MaxContentTitle, false),
		checkText("summary", e.Summary, false, MaxContentSummary, false),
		checkText("body", e.Body, false, MaxContentBody, true), checkImage("image", e.ImageURL, false),
		checkWindow(e.StartsAt, e.EndsAt)} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (b Banner) validate() error {
	if b.Place != PlaceHome && b.Place != PlaceEvents {
		return fmt.Errorf("%w: banner place %q (home or events)", ErrInvalid, b.Place)
	}
	for _, err := range []error{checkID(b.ID), checkLang(b.Lang), checkText("title", b.Title, true, MaxContentTitle, false),
		checkImage("image", b.ImageURL, true), checkLink("link", b.Link, false), checkWindow(b.StartsAt, b.EndsAt)} {
		if err != nil {
			return err
		}
	}
	return nil
}

func (a Announcement) validate() error {
	if a.PublishedAt.IsZero() {
		return fmt.Errorf("%w: publication time is missing", ErrInvalid)
	}
	for _, err := range []error{checkID(a.ID), checkLang(a.Lang), checkText("title", a.Title, true, MaxContentTitle, false),
		checkLink("link", a.Link, true)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// PutEvent creates or replaces one language's version of an event (keyed by id and language) and returns it as
// stored. A new version keeps nothing of an old one but its creation time.
func (s *Store) PutEvent(ctx context.Context, e Event) (Event, error) {
	if err := e.validate(); err != nil {
		return Event{}, err
	}
	now := s.stamp()
	e.StartsAt, e.EndsAt = trunc(e.StartsAt), trunc(e.EndsAt)
	_, err := s.w().exec(ctx, `INSERT INTO content_events (id, lang, title, summary, image_url, body, starts_at, ends_at,
		published, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id, lang) DO UPDATE SET title = excluded.title, summary = excluded.summary,
		image_url = excluded.image_url, body = excluded.body, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
		published = excluded.published, position = excluded.position, updated_at = excluded.updated_at`,
		e.ID, e.Lang, e.Title, e.Summary, e.ImageURL, e.Body, micros(e.StartsAt), optMicros(e.EndsAt),
		e.Published, e.Position, micros(now), micros(now))
	if err != nil {
		return Event{}, fmt.Errorf("store: put event: %w", err)
	}
	return s.event(ctx, s.w(), e.ID, e.Lang)
}

// PutBanner creates or replaces one language's version of a banner.
func (s *Store) PutBanner(ctx context.Context, b Banner) (Banner, error) {
	if err := b.validate(); err != nil {
		return Banner{}, err
	}
	now := s.stamp()
	b.StartsAt, b.EndsAt = trunc(b.StartsAt), trunc(b.EndsAt)
	_, err := s.w().exec(ctx, `INSERT INTO content_banners (id, lang, place, title, image_url, link, starts_at, ends_at,
		published, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id, lang) DO UPDATE SET place = excluded.place, title = excluded.title,
		image_url = excluded.image_url, link = excluded.link, starts_at = excluded.starts_at, ends_at = excluded.ends_at,
		published = excluded.published, position = excluded.position, updated_at = excluded.updated_at`,
		b.ID, b.Lang, b.Place, b.Title, b.ImageURL, b.Link, micros(b.StartsAt), optMicros(b.EndsAt), b.Published,
		b.Position, micros(now), micros(now))
	if err != nil {
		return Banner{}, fmt.Errorf("store: put banner: %w", err)
	}
	list, err := s.scanBanners(s.w().query(ctx, bannerCols+" FROM content_banners WHERE id = ? AND lang = ?", b.ID, b.Lang))
	if err != nil || len(list) != 1 {
		return Banner{}, fmt.Errorf("store: put banner: read back: %v", err)
	}
	return list[0], nil
}

// PutAnnouncement creates or replaces one language's version of an announcement.
func (s *Store) PutAnnouncement(ctx context.Context, a Announcement) (Announcement, error) {
	if err := a.validate(); err != nil {
		return Announcement{}, err
	}
	now := s.stamp()
	a.PublishedAt = trunc(a.PublishedAt)
	_, err := s.w().exec(ctx, `INSERT INTO content_announcements (id, lang, title, link, published_at, published,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id, lang) DO UPDATE SET title = excluded.title, link = excluded.link,
		published_at = excluded.published_at, published = excluded.published, updated_at = excluded.updated_at`,
		a.ID, a.Lang, a.Title, a.Link, micros(a.PublishedAt), a.Published, micros(now), micros(now))
	if err != nil {
		return Announcement{}, fmt.Errorf("store: put announcement: %w", err)
	}
	list, err := s.scanAnnouncements(s.w().query(ctx, annCols+" FROM content_announcements WHERE id = ? AND lang = ?",
		a.ID, a.Lang))
	if err != nil || len(list) != 1 {
		return Announcement{}, fmt.Errorf("store: put announcement: read back: %v", err)
	}
	return list[0], nil
}

func trunc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Microsecond)
}

func contentTable(kind string) (string, error) {
	switch kind {
	case KindEvent:
		return "content_events", nil
	case KindBanner:
		return "content_banners", nil
	case KindAnnouncement:
		return "content_announcements", nil
	}
	return "", fmt.Errorf("%w: content kind %q (event, banner or announcement)", ErrInvalid, kind)
}

// SetContentPublished publishes or unpublishes an item in every language; ErrNotFound when it has no row.
func (s *Store) SetContentPublished(ctx context.Context, kind, id string, published bool) error {
	table, err := contentTable(kind)
	if err != nil {
		return err
	}
	res, err := s.w().exec(ctx, "UPDATE "+table+" SET published = ?, updated_at = ? WHERE id = ?", published,
		micros(s.stamp()), id)
	if err != nil {
		return fmt.Errorf("store: publish %s: %w", kind, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%w: %s %q", ErrNotFound, kind, id)
	}
	return nil
}

// DeleteContent removes an item in every language (lang "") or one language's version; ErrNotFound when nothing
// matched.
func (s *Store) DeleteContent(ctx context.Context, kind, id, lang string) error {
	table, err := contentTable(kind)
	if err != nil {
		return err
	}
	var res sql.Result
	if lang == "" {
		res, err = s.w().exec(ctx, "DELETE FROM "+table+" WHERE id = ?", id)
	} else {
		res, err = s.w().exec(ctx, "DELETE FROM "+table+" WHERE id = ? AND lang = ?", id, lang)
	}
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", kind, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%w: %s %q", ErrNotFound, kind, id)
	}
	return nil
}

// ContentEmpty reports whether no event, banner or announcement exists (demo content is seeded only then).
func (s *Store) ContentEmpty(ctx context.Context) (bool, error) {
	var n int64
	err := s.r().row(ctx, `SELECT (SELECT COUNT(*) FROM content_events) + (SELECT COUNT(*) FROM content_banners)
		+ (SELECT COUNT(*) FROM content_announcements)`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: content count: %w", err)
	}
	return n == 0, nil
}

// ---- reads ------------------------------------------------------------------------------------------------------

const eventCols = `SELECT e.id, e.lang, e.title, e.summary, e.image_url, e.body, e.starts_at, e.ends_at, e.published,
	e.position, e.created_at, e.updated_at`

const bannerCols = `SELECT id, lang, place, title, image_url, link, starts_at, ends_at, published, position,
	created_at, updated_at`

const annCols = `SELECT id, lang, title, link, published_at, published, created_at, updated_at`

// langFilter keeps, for each published item, the row in lang, or its English row when lang has no published row
// (tableAlias.id and the same table). It takes two arguments: lang, lang.
func langFilter(table, alias string) string {
	return "(" + alias + ".lang = ? OR (" + alias + ".lang = 'en' AND NOT EXISTS (SELECT 1 FROM " + table +
		" x WHERE x.id = " + alias + ".id AND x.lang = ? AND x.published = TRUE)))"
}

func (s *Store) event(ctx context.Context, x q, id, lang string) (Event, error) {
	list, err := s.scanEvents(x.query(ctx, eventCols+" FROM content_events e WHERE e.id = ? AND e.lang = ?", id, lang))
	if err != nil {
		return Event{}, err
	}
	if len(list) == 0 {
		return Event{}, fmt.Errorf("%w: event %q (%s)", ErrNotFound, id, lang)
	}
	return list[0], nil
}

// PublicEvents lists published events in lang (falling back to English per event) for the window (EventsCurrent:
// not ended at now, EventsEnded, EventsAll): events not ended first, then by position, the latest start first.
// page counts from 1; total is the number of events across all pages.
func (s *Store) PublicEvents(ctx context.Context, lang, window string, now time.Time, page, pageSize int) ([]Event, int, error) {
	if err := checkLang(lang); err != nil {
		return nil, 0, err
	}
	if err := checkPage(page, pageSize); err != nil {
		return nil, 0, err
	}
	where := " FROM content_events e WHERE e.published = TRUE AND " + langFilter("content_events", "e")
	args := []any{lang, lang}
	switch window {
	case EventsCurrent:
		where += " AND (e.ends_at IS NULL OR e.ends_at >= ?)"
		args = append(args, micros(now))
	case EventsEnded:
		where += " AND e.ends_at < ?"
		args = append(args, micros(now))
	case EventsAll:
	default:
		return nil, 0, fmt.Errorf("%w: event window %q (current, ended or all)", ErrInvalid, window)
	}
	var total int
	if err := s.r().row(ctx, "SELECT COUNT(*)"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: events: %w", err)
	}
	list, err := s.scanEvents(s.r().query(ctx, eventCols+where+` ORDER BY CASE WHEN e.ends_at IS NOT NULL AND e.ends_at < ?
		THEN 1 ELSE 0 END, e.position, e.starts_at DESC, e.id LIMIT ? OFFSET ?`,
		append(args, micros(now), pageSize, (page-1)*pageSize)...))
	return list, total, err
}

// PublicEvent is a published event in lang, or its English version; ErrNotFound otherwise. Ended events stay
// readable (a link to one keeps working).
func (s *Store) PublicEvent(ctx context.Context, id, lang string) (Event, error) {
	if err := checkLang(lang); err != nil {
		return Event{}, err
	}
	if !ValidContentID(id) {
		return Event{}, fmt.Errorf("%w: event %q", ErrNotFound, id)
	}
	list, err := s.scanEvents(s.r().query(ctx, eventCols+` FROM content_events e WHERE e.id = ? AND e.published = TRUE
		AND `+langFilter("content_events", "e"), id, lang, lang))
	if err != nil {
		return Event{}, err
	}
	if len(list) == 0 {
		return Event{}, fmt.Errorf("%w: event %q", ErrNotFound, id)
	}
	return list[0], nil
}

// PublicBanners lists the published banners of a place in lang (English fallback per banner) whose window holds
// now, by position.
func (s *Store) PublicBanners(ctx context.Context, place, lang string, now time.Time, page, pageSize int) ([]Banner, int, error) {
	if place != PlaceHome && place != PlaceEvents {
		return nil, 0, fmt.Errorf("%w: banner place %q", ErrInvalid, place)
	}
	if err := checkLang(lang); err != nil {
		return nil, 0, err
	}
	if err := checkPage(page, pageSize); err != nil {
		return nil, 0, err
	}
	where := ` FROM content_banners b WHERE b.place = ? AND b.published = TRUE AND b.starts_at <= ?
		AND (b.ends_at IS NULL OR b.ends_at > ?) AND ` + langFilter("content_banners", "b")
	args := []any{place, micros(now), micros(now), lang, lang}
	var total int
	if err := s.r().row(ctx, "SELECT COUNT(*)"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: banners: %w", err)
	}
	list, err := s.scanBanners(s.r().query(ctx, `SELECT b.id, b.lang, b.place, b.title, b.image_url, b.link, b.starts_at,
		b.ends_at, b.published, b.position, b.created_at, b.updated_at`+where+
		" ORDER BY b.position, b.starts_at DESC, b.id LIMIT ? OFFSET ?", append(args, pageSize, (page-1)*pageSize)...))
	return list, total, err
}

// PublicAnnouncements lists published announcements in lang (English fallback) published by now, newest first, at
// most limit (1 to MaxContentPage).
func (s *Store) PublicAnnouncements(ctx context.Context, lang string, now time.Time, limit int) ([]Announcement, error) {
	if err := checkLang(lang); err != nil {
		return nil, err
	}
	if err := checkPage(1, limit); err != nil {
		return nil, err
	}
	return s.scanAnnouncements(s.r().query(ctx, `SELECT a.id, a.lang, a.title, a.link, a.published_at, a.published,
		a.created_at, a.updated_at FROM content_announcements a WHERE a.published = TRUE AND a.published_at <= ? AND `+
		langFilter("content_announcements", "a")+" ORDER BY a.published_at DESC, a.id LIMIT ?", micros(now), lang, lang,
		limit))
}

// AllEvents, AllBanners and AllAnnouncements list every row of a kind, in every language and state (the operator's
// list), by id then language.
func (s *Store) AllEvents(ctx context.Context) ([]Event, error) {
	return s.scanEvents(s.r().query(ctx, eventCols+" FROM content_events e ORDER BY e.id, e.lang"))
}

// AllBanners: see AllEvents.
func (s *Store) AllBanners(ctx context.Context) ([]Banner, error) {
	return s.scanBanners(s.r().query(ctx, bannerCols+" FROM content_banners ORDER BY place, id, lang"))
}

// AllAnnouncements: see AllEvents.
func (s *Store) AllAnnouncements(ctx context.Context) ([]Announcement, error) {
	return s.scanAnnouncements(s.r().query(ctx, annCols+" FROM content_announcements ORDER BY id, lang"))
}

func checkPage(page, pageSize int) error {
	if page < 1 || page > 100000 {
		return fmt.Errorf("%w: page %d", ErrInvalid, page)
	}
	if pageSize < 1 || pageSize > MaxContentPage {
		return fmt.Errorf("%w: page size %d (1 to %d)", ErrInvalid, pageSize, MaxContentPage)
	}
	return nil
}

func (s *Store) scanEvents(rows *sql.Rows, err error) ([]Event, error) {
	if err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var starts, created, updated, pos int64
		var ends sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Lang, &e.Title, &e.Summary, &e.ImageURL, &e.Body, &starts, &ends, &e.Published,
			&pos, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: events: %w", err)
		}
		e.StartsAt, e.EndsAt, e.Position = fromMicros(starts), nullMicros(ends), int(pos)
		e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events: %w", err)
	}
	return out, nil
}

func (s *Store) scanBanners(rows *sql.Rows, err error) ([]Banner, error) {
	if err != nil {
		return nil, fmt.Errorf("store: banners: %w", err)
	}
	defer rows.Close()
	out := []Banner{}
	for rows.Next() {
		var b Banner
		var starts, created, updated, pos int64
		var ends sql.NullInt64
		if err := rows.Scan(&b.ID, &b.Lang, &b.Place, &b.Title, &b.ImageURL, &b.Link, &starts, &ends, &b.Published,
			&pos, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: banners: %w", err)
		}
		b.StartsAt, b.EndsAt, b.Position = fromMicros(starts), nullMicros(ends), int(pos)
		b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: banners: %w", err)
	}
	return out, nil
}

func (s *Store) scanAnnouncements(rows *sql.Rows, err error) ([]Announcement, error) {
	if err != nil {
		return nil, fmt.Errorf("store: announcements: %w", err)
	}
	defer rows.Close()
	out := []Announcement{}
	for rows.Next() {
		var a Announcement
		var at, created, updated int64
		if err := rows.Scan(&a.ID, &a.Lang, &a.Title, &a.Link, &at, &a.Published, &created, &updated); err != nil {
			return nil, fmt.Errorf("store: announcements: %w", err)
		}
		a.PublishedAt, a.CreatedAt, a.UpdatedAt = fromMicros(at), fromMicros(created), fromMicros(updated)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: announcements: %w", err)
	}
	return out, nil
}
