package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/store"
)

func TestContentCommands(t *testing.T) {
	dataDir := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "exhub.yaml")
	if err := os.WriteFile(cfgFile, []byte("mode: demo\ndata_dir: "+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		err := run(ctx, append([]string{"--config", cfgFile}, args...), &out, &errw)
		return out.String() + errw.String(), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}

	item := filepath.Join(t.TempDir(), "cup.yaml")
	if err := os.WriteFile(item, []byte(`kind: event
id: cup
image: /content/trading-cup.svg
starts: 2026-11-01T00:00:00Z
ends: 2099-01-01T00:00:00Z
position: 3
en:
  title: The Cup
  summary: Trade and win.
  body: |
    ## Rules
    - Trade
ja:
  title: カップ
  body: 取引しましょう。
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun("content", "publish", "event", "--file", item)
	if !strings.Contains(out, "event cup (en) published") || !strings.Contains(out, "event cup (ja) published") {
		t.Fatalf("publish output %q", out)
	}
	// JSON works too, and a banner from flags.
	ann := filepath.Join(t.TempDir(), "ann.json")
	if err := os.WriteFile(ann, []byte(`{"kind": "announcement", "id": "note", "link": "https://help.example.org/a",
		"at": "2026-11-02T00:00:00Z", "en": {"title": "A note"}, "ja": {"title": "お知らせ"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun("content", "publish", "--file", ann)
	mustRun("content", "publish", "banner", "--id", "hb", "--lang", "ja", "--place", "home", "--title", "バナー",
		"--image", "/content/banner-cup.svg", "--link", "/event", "--starts", "2026-11-01T00:00:00Z", "--position", "1")

	// Refusals change nothing: an unknown key, a bad image, a bad kind.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("kind: event\nid: x\ntitel: typo\nen: {title: X}\n"), 0o600)
	if out, err := run("content", "publish", "--file", bad); err == nil || !strings.Contains(err.Error(), "titel") {
		t.Fatalf("unknown key: %v %s", err, out)
	}
	if _, err := run("content", "publish", "event", "--id", "x", "--lang", "en", "--title", "X", "--image", "https://cdn/x.png"); err == nil {
		t.Fatal("an off-site image was accepted")
	}
	if _, err := run("content", "publish", "poster", "--id", "x"); err == nil {
		t.Fatal("unknown kind accepted")
	}

	out = mustRun("content", "list")
	for _, want := range []string{"cup", "カップ", "The Cup", "hb", "バナー", "note", "お知らせ"} {
		if !strings.Contains(out, want) {
			t.Fatalf("list lacks %q:\n%s", want, out)
		}
	}

	st, err := store.Open(ctx, store.DefaultConfig(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	e, err := st.PublicEvent(ctx, "cup", "ja")
	if err != nil || e.Title != "カップ" || e.Position != 3 || e.ImageURL != "/content/trading-cup.svg" {
		t.Fatalf("event %+v %v", e, err)
	}
	if e, err := st.PublicEvent(ctx, "cup", "en"); err != nil || !strings.Contains(e.Body, "## Rules") {
		t.Fatalf("en body %+v %v", e, err)
	}
	if b, _, err := st.PublicBanners(ctx, "home", "ja", now, 1, 2); err != nil || len(b) != 1 || b[0].Link != "/event" {
		t.Fatalf("banners %+v %v", b, err)
	}

	mustRun("content", "unpublish", "event", "cup")
	if _, err := st.PublicEvent(ctx, "cup", "en"); err == nil {
		t.Fatal("unpublished event still public")
	}
	mustRun("content", "publish", "event", "cup")
	if _, err := st.PublicEvent(ctx, "cup", "en"); err != nil {
		t.Fatalf("published again: %v", err)
	}
	mustRun("content", "delete", "event", "cup", "--lang", "ja")
	if e, err := st.PublicEvent(ctx, "cup", "ja"); err != nil || e.Lang != "en" {
		t.Fatalf("after deleting ja: %+v %v", e, err)
	}
	mustRun("content", "delete", "announcement", "note")
	if a, err := st.PublicAnnouncements(ctx, "en", now, 10); err != nil || len(a) != 0 {
		t.Fatalf("announcements after delete %+v %v", a, err)
	}
	if _, err := run("content", "delete", "announcement", "note"); err == nil {
		t.Fatal("deleting twice succeeded")
	}
}

func TestRewardsCommands(t *testing.T) {
	dataDir := t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "exhub.yaml")
	if err := os.WriteFile(cfgFile, []byte("mode: demo\ndata_dir: "+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.DefaultConfig(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ref, _, err := st.EnsureMember(ctx, store.NewMember{ID: "0191f7a0-0000-7000-8000-0000000000a1"})
	if err != nil {
		t.Fatal(err)
	}
	var rewards []store.Reward
	for i, id := range []string{"0191f7a0-0000-7000-8000-0000000000b1", "0191f7a0-0000-7000-8000-0000000000b2"} {
		if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: id, ReferralCode: ref.ReferralCode}); err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			r, err := st.AddReward(ctx, store.Reward{MemberID: ref.ID, RefereeID: id, Amount: decimal.RequireFromString("0.5"),
				Coin: "USDT", SourceRef: fmt.Sprintf("fill:test:%d:%d", i, j)})
			if err != nil {
				t.Fatal(err)
			}
			rewards = append(rewards, r)
		}
	}
	run := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		err := run(ctx, append([]string{"--config", cfgFile}, args...), &out, &errw)
		return out.String() + errw.String(), err
	}
	out, err := run("rewards", "list")
	if err != nil || strings.Count(out, "unsettled") != 4 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := run("rewards", "settle", rewards[0].ID); err != nil || !strings.Contains(out, "1 rewards settled") {
		t.Fatalf("settle one: %v %s", err, out)
	}
	if _, err := run("rewards", "settle", rewards[0].ID); err == nil {
		t.Fatal("settling twice succeeded")
	}
	if _, err := run("rewards", "settle"); err == nil {
		t.Fatal("settle without ids or --all succeeded")
	}
	if out, err := run("rewards", "settle", "--all"); err != nil || !strings.Contains(out, "3 rewards settled") {
		t.Fatalf("settle all: %v %s", err, out)
	}
	totals, err := st.RewardTotals(ctx, ref.ID)
	if err != nil || !totals["USDT"].Settled.Equal(decimal.RequireFromString("2")) || !totals["USDT"].Unsettled.IsZero() {
		t.Fatalf("totals %+v %v", totals, err)
	}
	if out, err := run("rewards", "list", "--state", "settled", "--member", ref.ID); err != nil || strings.Count(out, "settled") < 4 {
		t.Fatalf("list settled: %v\n%s", err, out)
	}
}
