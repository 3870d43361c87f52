package store

import (
	"strings"
	"testing"
)

func doc(app, p string) KYCDocument {
	return KYCDocument{ApplicationID: app, FileName: "passport.pdf", ContentType: "application/pdf", Size: 1234,
		SHA256: strings.Repeat("ab", 32), StoragePath: p}
}

func TestKYCTransitions(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		a, err := s.CreateKYCApplication(ctx, "m", KYCPerson)
		if err != nil || a.State != KYCPending {
			t.Fatalf("create %+v %v", a, err)
		}
		_, err = s.CreateKYCApplication(ctx, "m", KYCCompany) // one open application at a time
		wantErr(t, err, ErrConflict)
		_, err = s.CreateKYCApplication(ctx, "ghost", KYCPerson)
		wantErr(t, err, ErrNotFound)
		_, err = s.CreateKYCApplication(ctx, "m", "robot")
		wantErr(t, err, ErrInvalid)

		d, err := s.AddKYCDocument(ctx, doc(a.ID, "kyc/m/"+a.ID+"/1.pdf"))
		if err != nil || d.ID == "" {
			t.Fatalf("add document %+v %v", d, err)
		}
		_, err = s.AddKYCDocument(ctx, doc(a.ID, "kyc/m/"+a.ID+"/1.pdf"))
		wantErr(t, err, ErrConflict)
		for _, p := range []string{"/etc/passwd", "../x", "kyc/../../x", "kyc//x", ""} {
			_, err = s.AddKYCDocument(ctx, doc(a.ID, p))
			wantErr(t, err, ErrInvalid)
		}
		_, err = s.AddKYCDocument(ctx, doc("nope", "kyc/x"))
		wantErr(t, err, ErrNotFound)

		// pending cannot jump to completed or declined.
		_, err = s.TransitionKYC(ctx, a.ID, KYCCompleted, "op", "")
		wantErr(t, err, ErrInvalidTransition)
		_, err = s.TransitionKYC(ctx, a.ID, KYCDeclined, "op", "")
		wantErr(t, err, ErrInvalidTransition)
		if a, err = s.TransitionKYC(ctx, a.ID, KYCInReview, "", ""); err != nil || a.State != KYCInReview {
			t.Fatalf("to in_review %+v %v", a, err)
		}
		_, err = s.AddKYCDocument(ctx, doc(a.ID, "kyc/late.pdf")) // documents only while pending
		wantErr(t, err, ErrInvalidTransition)
		if list, err := s.ListKYCByState(ctx, KYCInReview, 10); err != nil || len(list) != 1 || list[0].ID != a.ID {
			t.Fatalf("in review queue %+v %v", list, err)
		}
		if a, err = s.TransitionKYC(ctx, a.ID, KYCDeclined, "operator", "blurred photo"); err != nil ||
			a.State != KYCDeclined || a.Reason != "blurred photo" || a.ReviewedAt.IsZero() {
			t.Fatalf("decline %+v %v", a, err)
		}
		_, err = s.TransitionKYC(ctx, a.ID, KYCCompleted, "op", "") // final
		wantErr(t, err, ErrInvalidTransition)
		_, err = s.TransitionKYC(ctx, "nope", KYCInReview, "op", "")
		wantErr(t, err, ErrNotFound)

		// Declined may reapply.
		b, err := s.CreateKYCApplication(ctx, "m", KYCPerson)
		if err != nil {
			t.Fatalf("reapply after decline: %v", err)
		}
		if _, err := s.TransitionKYC(ctx, b.ID, KYCInReview, "auto", ""); err != nil {
			t.Fatal(err)
		}
		if b, err = s.TransitionKYC(ctx, b.ID, KYCCompleted, "auto", ""); err != nil || b.State != KYCCompleted {
			t.Fatalf("complete %+v %v", b, err)
		}
		_, err = s.CreateKYCApplication(ctx, "m", KYCPerson) // completed: no new application
		wantErr(t, err, ErrConflict)
		latest, err := s.LatestKYCApplication(ctx, "m")
		if err != nil || latest.ID != b.ID || latest.Reviewer != "auto" {
			t.Fatalf("latest %+v %v", latest, err)
		}
		got, err := s.KYCApplication(ctx, a.ID)
		if err != nil || got.State != KYCDeclined || got.Reviewer != "operator" {
			t.Fatalf("old application %+v %v", got, err)
		}
		docs, err := s.KYCDocuments(ctx, a.ID)
		if err != nil || len(docs) != 1 || docs[0].Size != 1234 || docs[0].SHA256 != strings.Repeat("ab", 32) {
			t.Fatalf("documents %+v %v", docs, err)
		}
		if list, err := s.ListKYCByState(ctx, KYCDeclined, 10); err != nil || len(list) != 1 {
			t.Fatalf("declined list %+v %v", list, err)
		}
		_, err = s.ListKYCByState(ctx, "approved", 10)
		wantErr(t, err, ErrInvalid)
	})
}

func TestExchangeKYC(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		if err := s.SetExchangeKYC(ctx, "m", "binance", true); err != nil {
			t.Fatal(err)
		}
		if err := s.SetExchangeKYC(ctx, "m", "okx", true); err != nil {
			t.Fatal(err)
		}
		if err := s.SetExchangeKYC(ctx, "m", "okx", false); err != nil {
			t.Fatal(err)
		}
		flags, err := s.ExchangeKYC(ctx, "m")
		if err != nil || len(flags) != 2 || !flags["binance"] || flags["okx"] {
			t.Fatalf("flags %v %v", flags, err)
		}
		wantErr(t, s.SetExchangeKYC(ctx, "ghost", "okx", true), ErrNotFound)
		wantErr(t, s.SetExchangeKYC(ctx, "m", "OKX", true), ErrInvalid)
	})
}
