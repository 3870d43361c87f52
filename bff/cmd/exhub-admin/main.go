// Command exhub-admin is the operator's tool for member data. It reads the same configuration as exhub-bff (the
// --config file or EXHUB_CONFIG, else bff/exhub.yaml in the working directory, then EXHUB_* variables) and opens
// the same store.
//
//	exhub-admin kyc list [--state in_review] [--limit 100]      applications in a state, oldest first
//	exhub-admin kyc approve <application-or-member> [--reviewer name]
//	exhub-admin kyc decline <application-or-member> --reason "..." [--reviewer name]
//
//	exhub-admin accounts rekey                                 re-encrypt exchange credentials under accounts.active_key
//	exhub-admin accounts list [--status failed] [--limit 100]   exchange accounts in a state (never a credential)
//	exhub-admin accounts retry <account-id>                    put a failed broker account back into provisioning
//
//	exhub-admin content list [event|banner|announcement]        events, banners and announcements in every language
//	exhub-admin content publish <kind> --file item.yaml         an item in both languages (YAML or JSON)
//	exhub-admin content publish <kind> --id ID --lang en ...    one language's version from flags
//	exhub-admin content unpublish|delete <kind> <id>            hide (every language) or remove it
//
//	exhub-admin rewards list [--state unsettled] [--member ID]  referral rewards in a state, oldest first
//	exhub-admin rewards settle <reward-id>... | --member ID | --all   record rewards as paid (settled)
//
// A member id stands for that member's latest application. Approving sets the member's KYC flag on the exchanges of
// kyc.exchanges (every configured exchange when empty).
//
// Rotating the key-encryption key: add the new key beside the old one (accounts.keys or EXHUB_ACCOUNTS_KEY_RING_FILE),
// make it accounts.active_key, restart the BFFs (new records use it, old ones still open), run accounts rekey, and
// remove the old key once it reports nothing left.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
)

const usage = `usage:
  exhub-admin [--config FILE] kyc list [--state pending|in_review|completed|declined] [--limit N]
  exhub-admin [--config FILE] kyc approve <application-or-member> [--reviewer NAME]
  exhub-admin [--config FILE] kyc decline <application-or-member> --reason TEXT [--reviewer NAME]
  exhub-admin [--config FILE] accounts rekey
  exhub-admin [--config FILE] accounts list [--status provisioning|active|failed] [--limit N]
  exhub-admin [--config FILE] accounts retry <account-id>
  exhub-admin [--config FILE] content list|publish|unpublish|delete ...   (exhub-admin content help)
  exhub-admin [--config FILE] rewards list [--state unsettled|settled] [--member ID] [--limit N]
  exhub-admin [--config FILE] rewards settle <reward-id>... | --member ID | --all`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "exhub-admin:", err)
		os.Exit(1)
	}
}

// run is the command with its arguments (without the program name).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	global := flag.NewFlagSet("exhub-admin", flag.ContinueOnError)
	global.SetOutput(stderr)
	configPath := global.String("config", os.Getenv("EXHUB_CONFIG"),
		"YAML config file (default: bff/exhub.yaml when it exists in the working directory; env EXHUB_CONFIG)")
	global.Usage = func() { fmt.Fprintln(stderr, usage) }
	if err := global.Parse(args); err != nil {
		return err
	}
	rest := global.Args()
	if len(rest) >= 1 && rest[0] == "accounts" {
		return accountsCommand(ctx, *configPath, rest[1:], stdout, stderr)
	}
	if len(rest) >= 1 && rest[0] == "content" {
		return contentCommand(ctx, *configPath, rest[1:], stdout, stderr)
	}
	if len(rest) >= 1 && rest[0] == "rewards" {
		return rewardsCommand(ctx, *configPath, rest[1:], stdout, stderr)
	}
	if len(rest) < 2 || rest[0] != "kyc" {
		global.Usage()
		return errors.New("unknown command")
	}
	cmd, cmdArgs := rest[1], rest[2:]

	fs := flag.NewFlagSet("exhub-admin kyc "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", store.KYCInReview, "list: the state to list")
	limit := fs.Int("limit", 100, "list: at most this many (1 to 1000)")
	reviewer := fs.String("reviewer", defaultReviewer(), "approve, decline: who decides (recorded)")
	reason := fs.String("reason", "", "decline: why (the member sees it)")
	// Flags may follow the id: parse, take the id, parse the rest.
	if err := fs.Parse(cmdArgs); err != nil {
		return err
	}
	var id string
	if fs.NArg() > 0 {
		id = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected arguments %q", fs.Args())
		}
	}

	cfg, err := loadConfig(*configPath)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.Store, store.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		return err
	}
	defer st.Close()
	kc := cfg.KYC
	if len(kc.Exchanges) == 0 {
		for _, e := range cfg.Exchanges {
			kc.Exchanges = append(kc.Exchanges, e.Slug)
		}
	}
	svc := kyc.New(st, cfg.DataPath(), kc, slog.New(slog.DiscardHandler))

	switch cmd {
	case "list":
		if id != "" {
			return fmt.Errorf("list takes no id")
		}
		return list(ctx, st, *state, *limit, stdout)
	case "approve", "decline":
		if id == "" {
			return fmt.Errorf("%s needs an application or member id", cmd)
		}
		app, err := svc.Resolve(ctx, id)
		if err != nil {
			return err
		}
		if cmd == "approve" {
			app, err = svc.Approve(ctx, app.ID, *reviewer)
		} else {
			if strings.TrimSpace(*reason) == "" {
				return errors.New("decline needs --reason")
			}
			app, err = svc.Decline(ctx, app.ID, *reviewer, *reason)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "application %s of member %s is %s (reviewer %s)\n", app.ID, app.MemberID, app.State, app.Reviewer)
		return err
	default:
		global.Usage()
		return fmt.Errorf("unknown kyc command %q", cmd)
	}
}

// accountsCommand runs the accounts commands: rekey (every sealed exchange credential not under
// accounts.active_key is re-encrypted under it), list and retry.
func accountsCommand(ctx context.Context, configPath string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "rekey" && args[0] != "list" && args[0] != "retry") {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown accounts command %q", strings.Join(args, " "))
	}
	fs := flag.NewFlagSet("exhub-admin accounts "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	status := fs.String("status", store.AccountFailed, "list: the status to list")
	limit := fs.Int("limit", 100, "list: at most this many (1 to 10000)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	rest := fs.Args()
	if (args[0] == "retry") != (len(rest) == 1) || len(rest) > 1 {
		return fmt.Errorf("accounts %s: unexpected arguments %q", args[0], rest)
	}
	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var keys *accounts.Keyring
	if args[0] == "rekey" {
		if keys, err = cfg.Accounts.WithDefaults().Keyring(); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, cfg.Store, store.WithLogger(log))
	if err != nil {
		return err
	}
	defer st.Close()
	switch args[0] {
	case "list":
		list, err := st.ExchangeAccountsByStatus(ctx, *status, *limit)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ACCOUNT\tMEMBER\tEXCHANGE\tMODE\tSTATUS\tUPDATED\tREASON")
		for _, a := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.MemberID, a.Exchange, a.Mode, a.Status,
				a.UpdatedAt.UTC().Format(time.RFC3339), a.StatusReason)
		}
		return w.Flush()
	case "retry":
		if err := st.RetryExchangeAccount(ctx, rest[0]); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "account %s is provisioning again; a running BFF resumes it within 30 s\n", rest[0])
		return err
	}
	res, err := accounts.Rekey(ctx, st, keys, log)
	fmt.Fprintf(stdout, "rekey under %s: %d resealed, %d changed meanwhile (run again), %d did not open\n",
		keys.Active(), res.Resealed, res.Changed, res.Failed)
	return err
}

func list(ctx context.Context, st *store.Store, state string, limit int, out io.Writer) error {
	apps, err := st.ListKYCByState(ctx, state, limit)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "APPLICATION\tMEMBER\tKIND\tSTATE\tDOCUMENTS\tUPDATED\tREASON")
	for _, a := range apps {
		docs, err := st.KYCDocuments(ctx, a.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", a.ID, a.MemberID, a.Kind, a.State, len(docs),
			a.UpdatedAt.UTC().Format(time.RFC3339), a.Reason)
	}
	return w.Flush()
}

func defaultReviewer() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "operator"
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		if _, err := os.Stat("bff/exhub.yaml"); err == nil {
			path = "bff/exhub.yaml"
		}
	}
	return config.Load(path)
}
