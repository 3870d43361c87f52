package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
)

const rewardsUsage = `usage:
  exhub-admin rewards list [--state unsettled|settled] [--member ID] [--limit N]
  exhub-admin rewards settle <reward-id>...            settle these rewards
  exhub-admin rewards settle --member ID | --all       settle every unsettled reward of a member, or of everybody`

// rewardsCommand lists referral rewards and settles them (the member is paid outside exhub; settling records it).
func rewardsCommand(ctx context.Context, configPath string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "settle") {
		fmt.Fprintln(stderr, rewardsUsage)
		return errors.New("rewards: unknown command")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("exhub-admin rewards "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, rewardsUsage) }
	state := fs.String("state", store.RewardUnsettled, "list: the state to list")
	member := fs.String("member", "", "list, settle: only this member's rewards (the referrer)")
	all := fs.Bool("all", false, "settle: every unsettled reward")
	limit := fs.Int("limit", 100, "list: at most this many (1 to 1000)")
	var ids []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if cmd == "list" && len(ids) > 0 {
		return fmt.Errorf("rewards list: unexpected arguments %q", ids)
	}
	if cmd == "settle" && (len(ids) > 0) == (*member != "" || *all) {
		return errors.New("rewards settle: give reward ids, or --member ID, or --all")
	}
	if cmd == "settle" && *member != "" && *all {
		return errors.New("rewards settle: --member or --all, not both")
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
	if cmd == "list" {
		list, err := st.RewardsByState(ctx, *state, *member, *limit)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "REWARD\tMEMBER\tREFEREE\tAMOUNT\tCOIN\tSTATE\tCREATED\tSOURCE")
		for _, r := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.MemberID, r.RefereeID, r.Amount.String(), r.Coin,
				r.State, r.CreatedAt.UTC().Format(time.RFC3339), r.SourceRef)
		}
		return w.Flush()
	}
	if len(ids) == 0 {
		// Every unsettled reward of the member (or everybody), page by page: a settled one leaves the list.
		settled := 0
		for {
			list, err := st.RewardsByState(ctx, store.RewardUnsettled, *member, 1000)
			if err != nil || len(list) == 0 {
				fmt.Fprintf(stdout, "%d rewards settled\n", settled)
				return err
			}
			for _, r := range list {
				if err := st.SettleReward(ctx, r.ID); err != nil {
					fmt.Fprintf(stdout, "%d rewards settled\n", settled)
					return fmt.Errorf("reward %s: %w", r.ID, err)
				}
				settled++
			}
		}
	}
	settled := 0
	var errs []error
	for _, id := range ids {
		if err := st.SettleReward(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("reward %s: %w", id, err))
			continue
		}
		settled++
	}
	fmt.Fprintf(stdout, "%d rewards settled\n", settled)
	return errors.Join(errs...)
}
