package trade

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/servicegate"
)

// ServiceGates is the member's standing with an exchange's gated services.
type ServiceGates struct {
	Exchange string               `json:"exchange"`
	Services []servicegate.Status `json:"services" doc:"trading, withdraw and transfer: what each needs and what the member still lacks"`
}

func (r *routes) registerGates(api huma.API) {
	huma.Register(api, r.op("get-service-gates", http.MethodGet, "/api/v1/service-gates", "Gated services of an exchange",
		"Which services (trading, withdraw, transfer) of the exchange need two-factor authentication or a verified "+
			"KYC by the operator's config, and which of those the member still lacks. A gated call without them is "+
			"403 problem+json with code two_factor_required or kyc_required."), r.serviceGates)
}

func (r *routes) serviceGates(ctx context.Context, in *ExchangeParam) (*reply[ServiceGates], error) {
	m, signedIn := auth.MemberFrom(ctx)
	if !signedIn {
		return nil, auth.Unauthorized()
	}
	list, err := r.Gates.CheckAll(ctx, gateMember(m), in.Exchange)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(ServiceGates{Exchange: in.Exchange, Services: list}), nil
}

func gateMember(m *auth.Member) servicegate.Member {
	return servicegate.Member{ID: m.ID, TwoFactor: m.TOTP}
}

// gate refuses a trading call on an exchange whose trading needs what the member lacks: 403 with the typed reason.
func (r *routes) gate(ctx context.Context, exchange string) error {
	if r.Gates == nil {
		return nil
	}
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return auth.Unauthorized()
	}
	st, err := r.Gates.Check(ctx, gateMember(m), exchange, servicegate.Trading)
	if err != nil {
		return r.fail(ctx, err)
	}
	if st.Allowed() {
		return nil
	}
	return &Problem{Type: "about:blank", Title: http.StatusText(http.StatusForbidden), Status: http.StatusForbidden,
		Code: st.Code, Detail: servicegate.Detail(st.Code, r.Gates.Name(exchange), servicegate.Trading)}
}
