package store

import (
	"sync"
	"testing"
)

func TestPreferencesVersioning(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		p, err := s.Preferences(ctx, "m")
		if err != nil || p.Version != 0 || p.Doc.Theme != "" {
			t.Fatalf("fresh preferences %+v %v", p, err)
		}
		doc := PreferencesDoc{Theme: "light", Language: "ja", Alerts: map[string]bool{"price": true, "fill": false},
			SoundVolume: "0.35", SubPages: map[string]string{"dashboard": "security"}}
		p1, err := s.PutPreferences(ctx, "m", doc, 0)
		if err != nil || p1.Version != 1 {
			t.Fatalf("first put %+v %v", p1, err)
		}
		// A second writer that also read version 0 loses.
		_, err = s.PutPreferences(ctx, "m", PreferencesDoc{Theme: "dark"}, 0)
		wantErr(t, err, ErrConflict)
		doc.Theme = "dark"
		p2, err := s.PutPreferences(ctx, "m", doc, 1)
		if err != nil || p2.Version != 2 {
			t.Fatalf("second put %+v %v", p2, err)
		}
		_, err = s.PutPreferences(ctx, "m", doc, 1) // stale
		wantErr(t, err, ErrConflict)
		got, err := s.Preferences(ctx, "m")
		if err != nil || got.Version != 2 || got.Doc.Theme != "dark" || got.Doc.SoundVolume != "0.35" ||
			!got.Doc.Alerts["price"] || got.Doc.SubPages["dashboard"] != "security" || got.UpdatedAt.IsZero() {
			t.Fatalf("read back %+v %v", got, err)
		}
		_, err = s.PutPreferences(ctx, "ghost", doc, 0)
		wantErr(t, err, ErrNotFound)
		_, err = s.PutPreferences(ctx, "ghost", doc, 3)
		wantErr(t, err, ErrNotFound)
		_, err = s.Preferences(ctx, "ghost")
		wantErr(t, err, ErrNotFound)

		// Concurrent writers from one version: exactly one wins.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.PutPreferences(ctx, "m", PreferencesDoc{Theme: "light"}, 2)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else if !isConflict(err) {
					t.Errorf("concurrent put: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d concurrent writers won, want 1", wins)
		}
	})
}

func TestPreferencesValidation(t *testing.T) {
	for _, bad := range []string{
		`{"theme":"blue"}`,
		`{"sound_volume":"1.5"}`,
		`{"sound_volume":"-0.1"}`,
		`{"sound_volume":"loud"}`,
		`{"sound_volume":0.5}`,
		`{"unknown":1}`,
		`{"theme":"dark"} {}`,
		`[]`,
		`{"trade":{"chart_type":17}}`,
		`{"trade":{"chart_type":-1}}`,
		`{"trade":{"interval":"a-very-long-interval"}}`,
		`{"trade":{"indicators":[""]}}`,
		`{"trade":{"indicators":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]}}`,
		`{"trade":{"layout":"x"}}`,
		`{"trade":{"depth_steps":5}}`,
	} {
		if _, err := DecodePreferences([]byte(bad)); !isInvalid(err) {
			t.Errorf("DecodePreferences(%s) = %v, want ErrInvalid", bad, err)
		}
	}
	d, err := DecodePreferences([]byte(`{"theme":"dark","language":"en","sound_volume":"1","alerts":{"price":true}}`))
	if err != nil || d.Theme != "dark" || d.SoundVolume != "1" || !d.Alerts["price"] {
		t.Fatalf("good document: %+v %v", d, err)
	}
}

// The trade screen's layout round-trips, an empty indicator list (none) included.
func TestTradePreferences(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		bars, none := 0, []string{}
		doc := PreferencesDoc{Theme: "dark", Trade: &TradePrefs{ChartType: &bars, Interval: "4h", Indicators: &none, PositionsAll: true, DepthSteps: 100}}
		if _, err := s.PutPreferences(ctx, "m", doc, 0); err != nil {
			t.Fatal(err)
		}
		got, err := s.Preferences(ctx, "m")
		tr := got.Doc.Trade
		if err != nil || tr == nil || tr.ChartType == nil || *tr.ChartType != 0 || tr.Interval != "4h" || tr.Indicators == nil ||
			len(*tr.Indicators) != 0 || !tr.PositionsAll || tr.OpenOrdersAll || tr.DepthSteps != 100 {
			t.Fatalf("read back %+v %v", tr, err)
		}
	})
	d, err := DecodePreferences([]byte(`{"trade":{"chart_type":13,"interval":"1D","indicators":["MA","VOL"],"open_orders_all":true}}`))
	if err != nil || d.Trade == nil || *d.Trade.ChartType != 13 || len(*d.Trade.Indicators) != 2 || !d.Trade.OpenOrdersAll || d.Trade.Indicators == nil {
		t.Fatalf("decode: %+v %v", d.Trade, err)
	}
}

// The eye on the home's balance card round-trips; absent is shown.
func TestHideBalancesPreference(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		if _, err := s.PutPreferences(ctx, "m", PreferencesDoc{Theme: "light", HideBalances: true}, 0); err != nil {
			t.Fatal(err)
		}
		got, err := s.Preferences(ctx, "m")
		if err != nil || !got.Doc.HideBalances || got.Doc.Theme != "light" {
			t.Fatalf("read back %+v %v", got.Doc, err)
		}
	})
	d, err := DecodePreferences([]byte(`{"theme":"dark"}`))
	if err != nil || d.HideBalances {
		t.Fatalf("decode without the key: %+v %v", d, err)
	}
	d, err = DecodePreferences([]byte(`{"hide_balances":true}`))
	if err != nil || !d.HideBalances {
		t.Fatalf("decode: %+v %v", d, err)
	}
}
