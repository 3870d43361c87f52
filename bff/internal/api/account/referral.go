package account

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// Referee is a member who signed up with this member's code.
type Referee struct {
	Nickname string    `json:"nickname,omitempty"`
	JoinedAt time.Time `json:"joined_at"`
}

// RewardTotal is the member's referral rewards in one coin (decimal strings).
type RewardTotal struct {
	Coin      string `json:"coin"`
	Settled   string `json:"settled" doc:"Decimal string"`
	Unsettled string `json:"unsettled" doc:"Decimal string"`
}

// Reward is one referral reward.
type Reward struct {
	ID        string     `json:"id"`
	Amount    string     `json:"amount" doc:"Decimal string"`
	Coin      string     `json:"coin"`
	State     string     `json:"state" enum:"settled,unsettled"`
	CreatedAt time.Time  `json:"created_at"`
	SettledAt *time.Time `json:"settled_at,omitempty"`
}

// Referral is the member's code, referees and rewards.
type Referral struct {
	Code     string        `json:"code" doc:"The member's own referral code"`
	Referees []Referee     `json:"referees" doc:"Oldest first"`
	Totals   []RewardTotal `json:"totals" doc:"Per coin, sorted by coin"`
	Rewards  []Reward      `json:"rewards" doc:"Newest first, at most 200"`
}

func (r *routes) registerReferral(api huma.API) {
	huma.Register(api, r.op("get-referral", http.MethodGet, "/api/v1/me/referral", "The member's referral program",
		"The member's own code, who signed up with it (nickname and join date only), and the rewards from their "+
			"trading fees: settled and unsettled totals per coin and the latest rows; amounts are decimal strings."),
		r.getReferral)
}

func (r *routes) getReferral(ctx context.Context, _ *struct{}) (*reply[Referral], error) {
	m, row, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	st := r.Members.Store()
	refs, err := st.ListReferees(ctx, m.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	totals, err := st.RewardTotals(ctx, m.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	rewards, err := st.ListRewards(ctx, m.ID, 200)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	out := Referral{Code: row.ReferralCode, Referees: make([]Referee, 0, len(refs)),
		Totals: make([]RewardTotal, 0, len(totals)), Rewards: make([]Reward, 0, len(rewards))}
	for _, x := range refs {
		out.Referees = append(out.Referees, Referee{Nickname: x.Nickname, JoinedAt: x.JoinedAt.UTC()})
	}
	for coin, t := range totals {
		out.Totals = append(out.Totals, RewardTotal{Coin: coin, Settled: t.Settled.String(), Unsettled: t.Unsettled.String()})
	}
	sort.Slice(out.Totals, func(i, j int) bool { return out.Totals[i].Coin < out.Totals[j].Coin })
	for _, w := range rewards {
		out.Rewards = append(out.Rewards, Reward{ID: w.ID, Amount: w.Amount.String(), Coin: w.Coin, State: w.State,
			CreatedAt: w.CreatedAt.UTC(), SettledAt: ptime(w.SettledAt)})
	}
	return ok(out), nil
}
