package okx

import (
	"net/url"
	"strconv"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func settingSpecs() []*exchangev1.SettingSpec {
	d := DefaultSettings()
	return []*exchangev1.SettingSpec{
		{Key: "rest_url", Description: "REST base URL", DefaultValue: d.RESTURL},
		{Key: "ws_public_url", Description: "public WebSocket URL (books, trades, tickers, mark price)", DefaultValue: d.WSPublicURL},
		{Key: "ws_private_url", Description: "private WebSocket URL (orders, positions, account)", DefaultValue: d.WSPrivateURL},
		{Key: "ws_business_url", Description: "business WebSocket URL (candles)", DefaultValue: d.WSBusinessURL},
		{Key: "rest_timeout", Description: "timeout of one REST call (Go duration)", DefaultValue: d.RESTTimeout.String()},
		{Key: "simulated_trading", Description: "send x-simulated-trading: 1 (OKX demo trading)", DefaultValue: "false"},
		{Key: "ws_ping_interval", Description: "idle time before a WebSocket ping (below 30s)", DefaultValue: d.PingInterval.String()},
		{Key: "reconnect_min", Description: "first WebSocket reconnect delay", DefaultValue: d.ReconnectMin.String()},
		{Key: "reconnect_max", Description: "longest WebSocket reconnect delay", DefaultValue: d.ReconnectMax.String()},
	}
}

func badSetting(key, format string, args ...any) error {
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, key, "setting "+key+": "+format, args...)
}

// ParseSettings validates Configure's map on top of the defaults. Unknown keys are INVALID_ARGUMENT.
func ParseSettings(m map[string]string) (Settings, error) {
	st := DefaultSettings()
	for k, v := range m {
		switch k {
		case "rest_url", "ws_public_url", "ws_private_url", "ws_business_url":
			u, err := url.Parse(v)
			if err != nil || u.Host == "" {
				return st, badSetting(k, "%q is not an absolute URL", v)
			}
			want := map[string][]string{"rest_url": {"http", "https"}}[k]
			if want == nil {
				want = []string{"ws", "wss"}
			}
			if u.Scheme != want[0] && u.Scheme != want[1] {
				return st, badSetting(k, "%q must use %s or %s", v, want[0], want[1])
			}
			switch k {
			case "rest_url":
				st.RESTURL = v
			case "ws_public_url":
				st.WSPublicURL = v
			case "ws_private_url":
				st.WSPrivateURL = v
			default:
				st.WSBusinessURL = v
			}
		case "rest_timeout", "ws_ping_interval", "reconnect_min", "reconnect_max":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > 10*time.Minute {
				return st, badSetting(k, "%q is not a duration between 0 and 10m", v)
			}
			switch k {
			case "rest_timeout":
				st.RESTTimeout = d
			case "ws_ping_interval":
				if d >= 30*time.Second {
					return st, badSetting(k, "%s must be below OKX's 30s idle limit", d)
				}
				st.PingInterval = d
			case "reconnect_min":
				st.ReconnectMin = d
			default:
				st.ReconnectMax = d
			}
		case "simulated_trading":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return st, badSetting(k, "%q is not a boolean", v)
			}
			st.Simulated = b
		default:
			return st, badSetting(k, "unknown setting")
		}
	}
	if st.ReconnectMin > st.ReconnectMax {
		return st, badSetting("reconnect_min", "%s is above reconnect_max %s", st.ReconnectMin, st.ReconnectMax)
	}
	return st, nil
}
