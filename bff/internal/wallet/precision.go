package wallet

import (
	"fmt"
	"net/http"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// NetworkPrecision is the most decimal places of a withdrawal's amount on a network: those of its withdraw_step when
// the exchange names one, else 8, or more where the network's fee or minimum are written with more. The wallet
// API's assets route reports it to the UI as the network's precision.
func NetworkPrecision(n *exchangev1.Network) int32 {
	if step, ok := withdrawStep(n); ok {
		return places(step)
	}
	scale := int32(maxScale)
	for _, v := range []string{n.GetWithdrawFee(), n.GetWithdrawMin()} {
		if d, err := decimal.NewFromString(v); err == nil {
			scale = max(scale, places(d))
		}
	}
	return scale
}

// withdrawStep is the network's withdrawal increment; ok is false when the exchange names none (or not a positive
// decimal).
func withdrawStep(n *exchangev1.Network) (decimal.Decimal, bool) {
	d, err := decimal.NewFromString(n.GetWithdrawStep())
	if err != nil || !d.IsPositive() {
		return decimal.Zero, false
	}
	return d, true
}

// checkPrecision refuses (422 precision, field amount) an amount written with more decimal places than the network
// takes, or that is not a whole multiple of its withdrawal increment.
func checkPrecision(amount decimal.Decimal, n *exchangev1.Network) *Error {
	if scale := NetworkPrecision(n); places(amount) > scale {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "precision", Field: "amount",
			Message: fmt.Sprintf("The amount has more than %d decimal places.", scale)}
	}
	if step, ok := withdrawStep(n); ok && !amount.Mod(step).IsZero() {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "precision", Field: "amount",
			Message: fmt.Sprintf("The amount must be a multiple of %s.", step.String())}
	}
	return nil
}
