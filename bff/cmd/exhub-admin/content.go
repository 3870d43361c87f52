package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/exhub/exhub/bff/internal/store"
)

const contentUsage = `usage:
  exhub-admin content list [event|banner|announcement]
  exhub-admin content publish <event|banner|announcement> --file ITEM.yaml    (both languages from one YAML or JSON file)
  exhub-admin content publish <event|banner|announcement> --id ID --lang en|ja [fields...] [--draft]
  exhub-admin content publish <event|banner|announcement> <id>                (publish again what was unpublished)
  exhub-admin content unpublish <event|banner|announcement> <id>
  exhub-admin content delete <event|banner|announcement> <id> [--lang en|ja]

fields: --title, --summary (event), --body or --body-file (event; plain text or Markdown), --image (a path on this
site such as /content/x.svg, or a data:image URI), --link (banner, announcement: a path or an https URL),
--place home|events (banner), --starts and --ends (RFC 3339; event, banner), --at (announcement: publication
time), --position N (lower first).`

// contentFile is one item in both languages: shared fields at the top, per-language ones under en and ja (a
// language block may also set its own image or link).
type contentFile struct {
	Kind      string       `yaml:"kind"`
	ID        string       `yaml:"id"`
	Place     string       `yaml:"place"`
	Image     string       `yaml:"image"`
	Link      string       `yaml:"link"`
	Starts    string       `yaml:"starts"`
	Ends      string       `yaml:"ends"`
	At        string       `yaml:"at"`
	Position  int          `yaml:"position"`
	Published *bool        `yaml:"published"`
	EN        *contentLang `yaml:"en"`
	JA        *contentLang `yaml:"ja"`
}

type contentLang struct {
	Title   string `yaml:"title"`
	Summary string `yaml:"summary"`
	Body    string `yaml:"body"`
	Image   string `yaml:"image"`
	Link    string `yaml:"link"`
}

// contentItem is one language's version, as flags or a file give it.
type contentItem struct {
	kind, id, lang, place             string
	title, summary, body, image, link string
	starts, ends, at                  time.Time
	position                          int
	published                         bool
}

func contentCommand(ctx context.Context, configPath string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, contentUsage)
		return errors.New("content: missing command")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("exhub-admin content "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, contentUsage) }
	var it contentItem
	file := fs.String("file", "", "publish: a YAML or JSON file describing the item in both languages")
	fs.StringVar(&it.id, "id", "", "publish: the item's id (lowercase letters, digits, dashes)")
	fs.StringVar(&it.lang, "lang", "", "publish: the language of the flags' version; delete: only this language")
	fs.StringVar(&it.place, "place", store.PlaceHome, "publish banner: home or events")
	fs.StringVar(&it.title, "title", "", "publish: title (a banner's text, shown over its image)")
	fs.StringVar(&it.summary, "summary", "", "publish event: one line for the list")
	fs.StringVar(&it.body, "body", "", "publish event: the body (plain text or Markdown)")
	bodyFile := fs.String("body-file", "", "publish event: read the body from this file")
	fs.StringVar(&it.image, "image", "", "publish: image path (/content/x.svg) or data:image URI")
	fs.StringVar(&it.link, "link", "", "publish banner, announcement: where it links")
	starts := fs.String("starts", "", "publish event, banner: start time (RFC 3339; default now)")
	ends := fs.String("ends", "", "publish event, banner: end time (RFC 3339; default none)")
	at := fs.String("at", "", "publish announcement: publication time (RFC 3339; default now)")
	fs.IntVar(&it.position, "position", 0, "publish: order in lists (lower first)")
	draft := fs.Bool("draft", false, "publish: store it unpublished")
	// Flags may come after the positional arguments: parse, take them, parse the rest.
	var pos []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}

	var kind string
	if len(pos) > 0 {
		kind = strings.TrimSuffix(pos[0], "s") // "events" works as well as "event"
	}
	switch cmd {
	case "list":
		if len(pos) > 1 {
			return fmt.Errorf("content list: unexpected arguments %q", pos[1:])
		}
	case "publish", "unpublish", "delete":
		if kind == "" && *file == "" {
			return fmt.Errorf("content %s: which kind (event, banner or announcement)?", cmd)
		}
		if len(pos) > 2 {
			return fmt.Errorf("content %s: unexpected arguments %q", cmd, pos[2:])
		}
	default:
		fmt.Fprintln(stderr, contentUsage)
		return fmt.Errorf("unknown content command %q", cmd)
	}
	if kind != "" && kind != store.KindEvent && kind != store.KindBanner && kind != store.KindAnnouncement {
		return fmt.Errorf("content: unknown kind %q (event, banner or announcement)", pos[0])
	}

	// Build what publish writes before opening anything, so a bad file or flag changes nothing.
	var items []contentItem
	republish := ""
	if cmd == "publish" {
		var err error
		switch {
		case *file != "":
			if len(pos) > 1 || it.id != "" {
				return errors.New("content publish: --file takes the id from the file")
			}
			items, err = readContentFile(*file, kind)
		case len(pos) == 2:
			republish = pos[1]
		default:
			if *bodyFile != "" {
				b, e := os.ReadFile(*bodyFile)
				if e != nil {
					return e
				}
				if !utf8.Valid(b) {
					return fmt.Errorf("content publish: %s is not UTF-8 text", *bodyFile)
				}
				it.body = string(b)
			}
			it.kind, it.published = kind, !*draft
			if it.starts, err = optTime("--starts", *starts); err == nil {
				if it.ends, err = optTime("--ends", *ends); err == nil {
					it.at, err = optTime("--at", *at)
				}
			}
			items = []contentItem{it}
		}
		if err != nil {
			return err
		}
	} else if cmd != "list" && len(pos) != 2 {
		return fmt.Errorf("content %s: needs the kind and the id", cmd)
	}

	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Store, store.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		return err
	}
	defer st.Close()

	switch cmd {
	case "list":
		return listContent(ctx, st, kind, stdout)
	case "unpublish":
		if err := st.SetContentPublished(ctx, kind, pos[1], false); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "%s %s unpublished (every language)\n", kind, pos[1])
		return err
	case "delete":
		if err := st.DeleteContent(ctx, kind, pos[1], it.lang); err != nil {
			return err
		}
		what := "every language"
		if it.lang != "" {
			what = it.lang
		}
		_, err := fmt.Fprintf(stdout, "%s %s deleted (%s)\n", kind, pos[1], what)
		return err
	}
	if republish != "" {
		if err := st.SetContentPublished(ctx, kind, republish, true); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "%s %s published (every language)\n", kind, republish)
		return err
	}
	now := time.Now().UTC()
	for _, x := range items {
		if err := putContent(ctx, st, x, now); err != nil {
			return fmt.Errorf("%s %s (%s): %w", x.kind, x.id, x.lang, err)
		}
		state := "published"
		if !x.published {
			state = "stored as a draft"
		}
		if _, err := fmt.Fprintf(stdout, "%s %s (%s) %s\n", x.kind, x.id, x.lang, state); err != nil {
			return err
		}
	}
	return nil
}

func optTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time (2026-12-01T00:00:00Z)", name, v)
	}
	return t, nil
}

// readContentFile reads one item in both languages from YAML (or JSON, which YAML reads too); unknown keys are
// refused so a typo never publishes a half-filled item.
func readContentFile(path, kind string) ([]contentItem, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f contentFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Kind != "" {
		f.Kind = strings.TrimSuffix(f.Kind, "s")
		if kind != "" && kind != f.Kind {
			return nil, fmt.Errorf("%s: kind %q, but the command says %q", path, f.Kind, kind)
		}
		kind = f.Kind
	}
	if kind != store.KindEvent && kind != store.KindBanner && kind != store.KindAnnouncement {
		return nil, fmt.Errorf("%s: which kind (event, banner or announcement)?", path)
	}
	if f.EN == nil && f.JA == nil {
		return nil, fmt.Errorf("%s: no language block (en: and/or ja:)", path)
	}
	base := contentItem{kind: kind, id: f.ID, place: f.Place, image: f.Image, link: f.Link, position: f.Position,
		published: f.Published == nil || *f.Published}
	if base.place == "" {
		base.place = store.PlaceHome
	}
	if base.starts, err = optTime("starts", f.Starts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if base.ends, err = optTime("ends", f.Ends); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if base.at, err = optTime("at", f.At); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []contentItem
	for _, l := range []struct {
		lang string
		v    *contentLang
	}{{store.LangEN, f.EN}, {store.LangJA, f.JA}} {
		if l.v == nil {
			continue
		}
		x := base
		x.lang, x.title, x.summary, x.body = l.lang, l.v.Title, l.v.Summary, l.v.Body
		if l.v.Image != "" {
			x.image = l.v.Image
		}
		if l.v.Link != "" {
			x.link = l.v.Link
		}
		out = append(out, x)
	}
	return out, nil
}

func putContent(ctx context.Context, st *store.Store, x contentItem, now time.Time) error {
	if x.starts.IsZero() {
		x.starts = now
	}
	var err error
	switch x.kind {
	case store.KindEvent:
		_, err = st.PutEvent(ctx, store.Event{ID: x.id, Lang: x.lang, Title: x.title, Summary: x.summary, Body: x.body,
			ImageURL: x.image, StartsAt: x.starts, EndsAt: x.ends, Published: x.published, Position: x.position})
	case store.KindBanner:
		_, err = st.PutBanner(ctx, store.Banner{ID: x.id, Lang: x.lang, Place: x.place, Title: x.title, ImageURL: x.image,
			Link: x.link, StartsAt: x.starts, EndsAt: x.ends, Published: x.published, Position: x.position})
	case store.KindAnnouncement:
		if x.at.IsZero() {
			x.at = now
		}
		_, err = st.PutAnnouncement(ctx, store.Announcement{ID: x.id, Lang: x.lang, Title: x.title, Link: x.link,
			PublishedAt: x.at, Published: x.published})
	}
	return err
}

func listContent(ctx context.Context, st *store.Store, kind string, out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	state := func(p bool) string {
		if p {
			return "published"
		}
		return "unpublished"
	}
	if kind == "" || kind == store.KindEvent {
		list, err := st.AllEvents(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "EVENT\tLANG\tSTATE\tPOSITION\tSTARTS\tENDS\tTITLE")
		for _, e := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", e.ID, e.Lang, state(e.Published), e.Position, ts(e.StartsAt),
				ts(e.EndsAt), e.Title)
		}
	}
	if kind == "" || kind == store.KindBanner {
		list, err := st.AllBanners(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "BANNER\tLANG\tSTATE\tPLACE\tPOSITION\tSTARTS\tENDS\tLINK\tTITLE")
		for _, b := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", b.ID, b.Lang, state(b.Published), b.Place, b.Position,
				ts(b.StartsAt), ts(b.EndsAt), b.Link, b.Title)
		}
	}
	if kind == "" || kind == store.KindAnnouncement {
		list, err := st.AllAnnouncements(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "ANNOUNCEMENT\tLANG\tSTATE\tAT\tLINK\tTITLE")
		for _, a := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Lang, state(a.Published), ts(a.PublishedAt), a.Link, a.Title)
		}
	}
	return w.Flush()
}
