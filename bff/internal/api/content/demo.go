package content

import (
	"context"
	"fmt"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
)

// Seeder is what SeedDemo writes to; *store.Store is one.
type Seeder interface {
	ContentEmpty(ctx context.Context) (bool, error)
	PutEvent(ctx context.Context, e store.Event) (store.Event, error)
	PutBanner(ctx context.Context, b store.Banner) (store.Banner, error)
	PutAnnouncement(ctx context.Context, a store.Announcement) (store.Announcement, error)
}

// HelpCenterURL is where the demo announcements link (the project's documentation).
const HelpCenterURL = "https://github.com/exhub/exhub/tree/main/docs"

// SeedDemo writes the demo content (events, banners and announcements in English and Japanese, with the images
// the UI ships under /content/) when the store holds no content at all, and reports whether it did. Times are
// relative to now, so the demo always has ongoing, upcoming and ended events.
func SeedDemo(ctx context.Context, st Seeder, now time.Time) (bool, error) {
	empty, err := st.ContentEmpty(ctx)
	if err != nil || !empty {
		return false, err
	}
	day := 24 * time.Hour
	now = now.UTC().Truncate(time.Hour)
	type pair struct{ en, ja string }
	events := []struct {
		id             string
		title, summary pair
		body           pair
		image          string
		start, end     time.Duration
	}{
		{
			id:      "trading-cup",
			title:   pair{"exhub Trading Cup", "exhub トレーディングカップ"},
			summary: pair{"Trade perpetual futures on any partner exchange and climb the leaderboard.", "提携取引所の無期限先物を取引して、ランキングの上位を目指しましょう。"},
			body: pair{
				"## How it works\n\nTrade USDT-margined perpetual futures on any partner exchange during the event. " +
					"Your **trading volume** counts across exchanges.\n\n## Rewards\n\n- 1st place: 1,000 USDT\n- 2nd place: 500 USDT\n- 3rd place: 250 USDT\n\n" +
					"Read the [rules in the help center](" + HelpCenterURL + ").",
				"## 参加方法\n\n期間中、提携取引所で USDT 建て無期限先物を取引してください。取引所をまたいだ**取引量**が集計されます。\n\n" +
					"## 報酬\n\n- 1位: 1,000 USDT\n- 2位: 500 USDT\n- 3位: 250 USDT\n\n[ヘルプセンターのルール](" + HelpCenterURL + ")をご確認ください。",
			},
			image: "/content/trading-cup.svg", start: -3 * day, end: 11 * day,
		},
		{
			id:      "spot-zero-fee",
			title:   pair{"Zero-fee spot week", "現物取引手数料ゼロ週間"},
			summary: pair{"Spot trading fees refunded on selected pairs for one week.", "対象ペアの現物取引手数料を1週間キャッシュバック。"},
			body: pair{
				"Trade the selected spot pairs and the trading fee comes back to your wallet after the event.\n\n" +
					"- BTC/USDT\n- ETH/USDT\n- SOL/USDT\n\nRefunds are credited within 7 days after the end.",
				"対象の現物ペアを取引すると、イベント終了後に取引手数料がウォレットに戻ります。\n\n" +
					"- BTC/USDT\n- ETH/USDT\n- SOL/USDT\n\n終了後7日以内に付与されます。",
			},
			image: "/content/spot-week.svg", start: 4 * day, end: 11 * day,
		},
		{
			id:      "welcome-bonus",
			title:   pair{"Welcome bonus", "新規登録ボーナス"},
			summary: pair{"New members who completed KYC received a trading bonus.", "本人確認を完了した新規会員に取引ボーナスを付与しました。"},
			body: pair{
				"Thank you for joining. This campaign has ended; watch this page for the next one.",
				"ご参加ありがとうございました。このキャンペーンは終了しました。次回のイベントをお待ちください。",
			},
			image: "/content/welcome.svg", start: -30 * day, end: -2 * day,
		},
	}
	for i, e := range events {
		for _, lang := range []string{store.LangEN, store.LangJA} {
			pick := func(p pair) string {
				if lang == store.LangJA {
					return p.ja
				}
				return p.en
			}
			if _, err := st.PutEvent(ctx, store.Event{ID: e.id, Lang: lang, Title: pick(e.title), Summary: pick(e.summary),
				Body: pick(e.body), ImageURL: e.image, StartsAt: now.Add(e.start), EndsAt: now.Add(e.end),
				Published: true, Position: i}); err != nil {
				return false, fmt.Errorf("demo event %s: %w", e.id, err)
			}
		}
	}
	banners := []struct {
		id, place, image, link string
		title                  pair
	}{
		{"home-trading-cup", store.PlaceHome, "/content/banner-cup.svg", "/eventDetail/trading-cup",
			pair{"exhub Trading Cup: trade futures and win up to 1,000 USDT", "exhub トレーディングカップ：先物取引で最大 1,000 USDT"}},
		{"home-markets", store.PlaceHome, "/content/banner-markets.svg", "/market",
			pair{"Every partner exchange's markets in one list", "すべての提携取引所のマーケットをひとつのリストで"}},
		{"events-top", store.PlaceEvents, "/content/banner-events.svg", "/eventDetail/trading-cup",
			pair{"Events and campaigns on exhub", "exhub のイベントとキャンペーン"}},
	}
	for i, b := range banners {
		for _, lang := range []string{store.LangEN, store.LangJA} {
			title := b.title.en
			if lang == store.LangJA {
				title = b.title.ja
			}
			if _, err := st.PutBanner(ctx, store.Banner{ID: b.id, Lang: lang, Place: b.place, Title: title,
				ImageURL: b.image, Link: b.link, StartsAt: now.Add(-30 * day), Published: true, Position: i}); err != nil {
				return false, fmt.Errorf("demo banner %s: %w", b.id, err)
			}
		}
	}
	anns := []struct {
		id    string
		title pair
		ago   time.Duration
	}{
		{"maintenance", pair{"Scheduled maintenance of the demo exchanges", "デモ取引所の定期メンテナンスのお知らせ"}, 1 * day},
		{"trading-cup-rules", pair{"Trading Cup rules published", "トレーディングカップのルールを公開しました"}, 3 * day},
		{"new-pairs", pair{"New perpetual futures pairs listed", "新しい無期限先物ペアを追加しました"}, 7 * day},
	}
	for _, a := range anns {
		for _, lang := range []string{store.LangEN, store.LangJA} {
			title := a.title.en
			if lang == store.LangJA {
				title = a.title.ja
			}
			if _, err := st.PutAnnouncement(ctx, store.Announcement{ID: a.id, Lang: lang, Title: title, Link: HelpCenterURL,
				PublishedAt: now.Add(-a.ago), Published: true}); err != nil {
				return false, fmt.Errorf("demo announcement %s: %w", a.id, err)
			}
		}
	}
	return true, nil
}
