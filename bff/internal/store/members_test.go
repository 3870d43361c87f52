package store

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

func TestEnsureMemberConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		const n = 32
		var wg sync.WaitGroup
		members := make([]Member, n)
		created := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				members[i], created[i], errs[i] = s.EnsureMember(ctx, NewMember{ID: "m-1", Nickname: "alice", Locale: "ja"})
			}()
		}
		wg.Wait()
		creators := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("EnsureMember %d: %v", i, errs[i])
			}
			if created[i] {
				creators++
			}
			if members[i].ReferralCode != members[0].ReferralCode || members[i].ID != "m-1" {
				t.Fatalf("call %d saw %+v, call 0 saw %+v", i, members[i], members[0])
			}
		}
		if creators != 1 {
			t.Fatalf("%d calls report creating the member, want 1", creators)
		}
		var rows int
		if err := s.r().row(ctx, "SELECT COUNT(*) FROM members").Scan(&rows); err != nil || rows != 1 {
			t.Fatalf("members rows %d (%v), want 1", rows, err)
		}
		m := members[0]
		if m.Nickname != "alice" || m.Locale != "ja" || m.CreatedAt.IsZero() {
			t.Fatalf("member fields: %+v", m)
		}
		if len(m.ReferralCode) != referralLen || strings.Trim(m.ReferralCode, referralAlphabet) != "" {
			t.Fatalf("referral code %q: want %d characters of %s", m.ReferralCode, referralLen, referralAlphabet)
		}
		got, err := s.MemberByReferralCode(ctx, " "+strings.ToLower(m.ReferralCode)+" ")
		if err != nil || got.ID != "m-1" {
			t.Fatalf("MemberByReferralCode: %+v, %v", got, err)
		}
		_, err = s.Member(ctx, "nobody")
		wantErr(t, err, ErrNotFound)
		_, _, err = s.EnsureMember(ctx, NewMember{ID: ""})
		wantErr(t, err, ErrInvalid)
	})
}

func TestReferralCodesDistinct(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		seen := map[string]bool{}
		for i := range 50 {
			m := mustMember(t, s, fmt.Sprintf("u%02d", i))
			if seen[m.ReferralCode] {
				t.Fatalf("referral code %s given twice", m.ReferralCode)
			}
			seen[m.ReferralCode] = true
		}
	})
}

func TestReferralAppliedOnce(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		alice := mustMember(t, s, "alice")
		bob := mustMember(t, s, "bob")

		carol, created, err := s.EnsureMember(ctx, NewMember{ID: "carol", ReferralCode: strings.ToLower(alice.ReferralCode)})
		if err != nil || !created || carol.ReferredBy != "alice" {
			t.Fatalf("carol: %+v created=%v err=%v; want referred by alice", carol, created, err)
		}
		// Later sightings with another code change nothing: the referrer is set once, at creation.
		again, created, err := s.EnsureMember(ctx, NewMember{ID: "carol", ReferralCode: bob.ReferralCode})
		if err != nil || created || again.ReferredBy != "alice" {
			t.Fatalf("carol again: %+v created=%v err=%v; want still alice", again, created, err)
		}
		// A member created without a code is never referred later.
		dave := mustMember(t, s, "dave")
		dave, _, err = s.EnsureMember(ctx, NewMember{ID: "dave", ReferralCode: alice.ReferralCode})
		if err != nil || dave.ReferredBy != "" {
			t.Fatalf("dave: %+v, %v; want no referrer", dave, err)
		}
		// Unknown codes are ignored.
		erin, _, err := s.EnsureMember(ctx, NewMember{ID: "erin", ReferralCode: "ZZZZZZZZ"})
		if err != nil || erin.ReferredBy != "" {
			t.Fatalf("erin: %+v, %v", erin, err)
		}
		refs, err := s.ListReferees(ctx, "alice")
		if err != nil || len(refs) != 1 || refs[0].ID != "carol" {
			t.Fatalf("alice's referees: %+v, %v", refs, err)
		}
		refs, err = s.ListReferees(ctx, "bob")
		if err != nil || len(refs) != 0 {
			t.Fatalf("bob's referees: %+v, %v", refs, err)
		}
	})
}

func TestNicknameAndLogins(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		if err := s.UpdateNickname(ctx, "m", "新しい名前"); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.UpdateNickname(ctx, "m", ""), ErrInvalid)
		wantErr(t, s.UpdateNickname(ctx, "m", strings.Repeat("x", MaxNicknameLen+1)), ErrInvalid)
		wantErr(t, s.UpdateNickname(ctx, "m", "a\nb"), ErrInvalid)
		wantErr(t, s.UpdateNickname(ctx, "ghost", "ok"), ErrNotFound)

		t1 := time.Date(2026, 11, 1, 10, 0, 0, 123456000, time.UTC)
		t2 := t1.Add(48 * time.Hour)
		if err := s.RecordLogin(ctx, "m", Login{At: t1, IP: "192.0.2.1", SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
		// The same session again (a page reload): nothing moves.
		if err := s.RecordLogin(ctx, "m", Login{At: t1.Add(time.Minute), IP: "192.0.2.9", SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordLogin(ctx, "m", Login{At: t2, IP: "2001:db8::1", SessionID: "s2"}); err != nil {
			t.Fatal(err)
		}
		m, err := s.Member(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		if m.Nickname != "新しい名前" {
			t.Fatalf("nickname %q", m.Nickname)
		}
		if !m.LastLogin.At.Equal(t2) || m.LastLogin.IP != "2001:db8::1" || m.LastLogin.SessionID != "s2" {
			t.Fatalf("last login %+v", m.LastLogin)
		}
		if !m.PreviousLogin.At.Equal(t1) || m.PreviousLogin.IP != "192.0.2.1" {
			t.Fatalf("previous login %+v, want %s from 192.0.2.1", m.PreviousLogin, t1)
		}
		// The other report of s2's sign-in (the login hook, before the session had its id): same time, nothing moves.
		if err := s.RecordLogin(ctx, "m", Login{At: t2, IP: "198.51.100.7"}); err != nil {
			t.Fatal(err)
		}
		// A late report of an older sign-in never displaces the newer one.
		if err := s.RecordLogin(ctx, "m", Login{At: t2.Add(-time.Hour), IP: "198.51.100.8", SessionID: "s0"}); err != nil {
			t.Fatal(err)
		}
		// Two sign-ins moments apart are two.
		t3 := t2.Add(300 * time.Millisecond)
		if err := s.RecordLogin(ctx, "m", Login{At: t3, IP: "192.0.2.3", SessionID: "s3"}); err != nil {
			t.Fatal(err)
		}
		m, err = s.Member(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		if !m.LastLogin.At.Equal(t3) || m.LastLogin.SessionID != "s3" || !m.PreviousLogin.At.Equal(t2) ||
			m.PreviousLogin.IP != "2001:db8::1" {
			t.Fatalf("after the repeat, the late report and a quick second sign-in: last %+v previous %+v",
				m.LastLogin, m.PreviousLogin)
		}
		wantErr(t, s.RecordLogin(ctx, "ghost", Login{At: t1, SessionID: "x"}), ErrNotFound)
	})
}

func TestWithdrawLockoutAndSecurityEvents(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		m, _ := s.Member(ctx, "m")
		if m.WithdrawLocked(now) || !m.WithdrawLockedUntil.IsZero() {
			t.Fatalf("a new member is locked: %+v", m)
		}
		until := now.Add(24 * time.Hour)
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityPassword, At: now, IP: "192.0.2.7"}, until); err != nil {
			t.Fatal(err)
		}
		// An earlier end (a clock that went back, say) never shortens the running lockout.
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityTOTP, At: now.Add(time.Hour)}, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		m, _ = s.Member(ctx, "m")
		if !m.WithdrawLockedUntil.Equal(until) || !m.WithdrawLocked(now.Add(23*time.Hour)) || m.WithdrawLocked(until) {
			t.Fatalf("locked until %s, want %s", m.WithdrawLockedUntil, until)
		}
		later := now.Add(30 * time.Hour)
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityOTPReset, At: later}, later.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		m, _ = s.Member(ctx, "m")
		if !m.WithdrawLockedUntil.Equal(later.Add(24 * time.Hour)) {
			t.Fatalf("a new change did not extend the lockout: %s", m.WithdrawLockedUntil)
		}
		evs, err := s.SecurityEvents(ctx, "m", 10)
		if err != nil || len(evs) != 3 {
			t.Fatalf("events %+v, %v", evs, err)
		}
		if evs[0].Kind != SecurityOTPReset || evs[2].Kind != SecurityPassword || evs[2].IP != "192.0.2.7" || !evs[2].At.Equal(now) {
			t.Fatalf("events not newest first or fields lost: %+v", evs)
		}
		wantErr(t, s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: "nickname"}, until), ErrInvalid)
		wantErr(t, s.StartWithdrawLockout(ctx, "ghost", SecurityEvent{Kind: SecurityEmail}, until), ErrNotFound)
		// The failed call for a missing member left no event behind.
		var n int
		if err := s.r().row(ctx, "SELECT COUNT(*) FROM security_events").Scan(&n); err != nil || n != 3 {
			t.Fatalf("security_events rows %d, %v", n, err)
		}
	})
}

// New recovery codes are their own kind of security event: accepted, listed as such, and they lock withdrawals like
// every security change. The table keeps its constraints after migration 8 rebuilt it.
func TestRecoveryCodesEvent(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityTOTP, At: now}, now.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Hour)
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityRecoveryCodes, At: later, IP: "192.0.2.9"},
			later.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		evs, err := s.SecurityEvents(ctx, "m", 10)
		if err != nil || len(evs) != 2 || evs[0].Kind != "recovery_codes" || evs[0].IP != "192.0.2.9" ||
			!evs[0].At.Equal(later) || evs[1].Kind != SecurityTOTP {
			t.Fatalf("events %+v, %v", evs, err)
		}
		if m, _ := s.Member(ctx, "m"); !m.WithdrawLockedUntil.Equal(later.Add(24 * time.Hour)) {
			t.Fatalf("locked until %s", m.WithdrawLockedUntil)
		}
		// The database itself still refuses an unknown kind and an event of no member.
		if _, err := s.w().exec(ctx, "INSERT INTO security_events (id, member_id, kind, at, ip) VALUES (?, ?, ?, ?, ?)",
			newID(), "m", "nickname", micros(now), ""); err == nil {
			t.Fatal("security_events took an unknown kind")
		}
		if _, err := s.w().exec(ctx, "INSERT INTO security_events (id, member_id, kind, at, ip) VALUES (?, ?, ?, ?, ?)",
			newID(), "ghost", SecurityTOTP, micros(now), ""); err == nil {
			t.Fatal("security_events took an event of no member")
		}
	})
}

// Migration 8 keeps every security event on its way up, and on its way down turns recovery-code events back into
// authenticator events (the only kind the older table accepts).
func TestRecoveryCodesMigration(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		fsys, err := fs.Sub(migrations, "migrations")
		if err != nil {
			t.Fatal(err)
		}
		dialect := goose.DialectSQLite3
		if s.pg {
			dialect = goose.DialectPostgres
		}
		p, err := goose.NewProvider(dialect, s.write, fsys, goose.WithTableName(MigrationTable), goose.WithDisableGlobalRegistry(true))
		if err != nil {
			t.Fatal(err)
		}
		mustMember(t, s, "m")
		now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
		for i, k := range []string{SecurityPassword, SecurityRecoveryCodes, SecurityOTPReset} {
			at := now.Add(time.Duration(i) * time.Minute)
			if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: k, At: at, IP: "192.0.2.1"}, at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		kinds := func() []string {
			t.Helper()
			evs, err := s.SecurityEvents(ctx, "m", 10)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range evs {
				if e.IP != "192.0.2.1" {
					t.Fatalf("event lost its IP: %+v", e)
				}
				out = append(out, e.Kind)
			}
			return out
		}
		if _, err := p.DownTo(ctx, 7); err != nil {
			t.Fatal(err)
		}
		if got := kinds(); !slices.Equal(got, []string{SecurityOTPReset, SecurityTOTP, SecurityPassword}) {
			t.Fatalf("after down: %v", got)
		}
		// The older table's own CHECK refuses the new kind (the lockout and the event are one transaction).
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityRecoveryCodes, At: now.Add(time.Hour)},
			now.Add(2*time.Hour)); err == nil {
			t.Fatal("the version 7 table took a recovery_codes event")
		}
		if _, err := p.Up(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.StartWithdrawLockout(ctx, "m", SecurityEvent{Kind: SecurityRecoveryCodes, At: now.Add(time.Hour), IP: "192.0.2.1"},
			now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := kinds(); !slices.Equal(got, []string{SecurityRecoveryCodes, SecurityOTPReset, SecurityTOTP, SecurityPassword}) {
			t.Fatalf("after up: %v", got)
		}
	})
}

// The DSN (which may hold a password) never appears in fmt or slog output of the config, nor in Open's errors.
func TestDSNNeverPrinted(t *testing.T) {
	const pw = "hunter2-very-secret"
	dsn := "postgres://exhub:" + pw + "@127.0.0.1:1/exhub?sslmode=disable&connect_timeout=2"
	cfg := DefaultConfig("/tmp")
	cfg.Driver = DriverPostgres
	cfg.DSN = secret.New(dsn)

	var buf bytes.Buffer
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		fmt.Fprintf(&buf, f+"\n", cfg)
		fmt.Fprintf(&buf, f+"\n", cfg.DSN)
	}
	fmt.Fprintln(&buf, cfg, &cfg)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("cfg", "store", cfg, "dsn", cfg.DSN)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cfg", "store", cfg, "dsn", cfg.DSN)
	_, err := Open(ctxT(t), cfg) // nothing listens on port 1
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	fmt.Fprintln(&buf, err)
	bad := cfg
	bad.DSN = secret.New("postgres://u:" + pw + "@[::1")
	_, err = Open(ctxT(t), bad)
	if err == nil {
		t.Fatal("Open accepted a malformed DSN")
	}
	fmt.Fprintln(&buf, err)
	if strings.Contains(buf.String(), pw) || strings.Contains(buf.String(), strings.ToUpper(fmt.Sprintf("%x", pw))) ||
		strings.Contains(buf.String(), fmt.Sprintf("%x", pw)) {
		t.Fatalf("the password leaked:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), secret.Redacted) {
		t.Fatalf("no redaction marker in the output:\n%s", buf.String())
	}
}
