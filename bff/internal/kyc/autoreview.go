package kyc

import (
	"context"
	"errors"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
)

// AutoReviewer is the name recorded as the reviewer of applications the auto-reviewer completes.
const AutoReviewer = "auto"

// RunAutoReview completes applications that have been in review for Config.AutoReviewDelay, looking every
// Config.AutoReviewInterval, until ctx ends (demo mode: the app runs it only there). It returns nil when ctx ends.
func (s *Service) RunAutoReview(ctx context.Context) error {
	t := time.NewTicker(s.cfg.AutoReviewInterval)
	defer t.Stop()
	for {
		if err := s.ReviewDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("kyc auto-review", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ReviewDue completes every application in review since at least Config.AutoReviewDelay (one pass of the
// auto-reviewer). An application another reviewer decided meanwhile is left alone.
func (s *Service) ReviewDue(ctx context.Context) error {
	apps, err := s.store.ListKYCByState(ctx, store.KYCInReview, 100)
	if err != nil {
		return err
	}
	now := s.now()
	for _, a := range apps {
		if now.Sub(a.UpdatedAt) < s.cfg.AutoReviewDelay {
			continue
		}
		if _, err := s.Approve(ctx, a.ID, AutoReviewer); err != nil && !errors.Is(err, store.ErrInvalidTransition) {
			return err
		}
		s.log.Info("kyc application completed by the demo auto-reviewer", "application", a.ID, "member", a.MemberID)
	}
	return nil
}
