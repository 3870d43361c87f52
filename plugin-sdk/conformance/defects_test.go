package conformance_test

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// hook is the reference exchange with one defect: fix rewrites the answer of a unary call (it gets a copy, never
// the server's own objects), market and account rewrite stream events (nil drops one).
type hook struct {
	*sdktest.Server
	fix     func(method string, req, resp proto.Message, err error) (proto.Message, error)
	market  func(*exchangev1.MarketEvent) *exchangev1.MarketEvent
	account func(*exchangev1.AccountEvent) *exchangev1.AccountEvent
}

func after[T proto.Message](h *hook, method string, req proto.Message, resp T, err error) (T, error) {
	if h.fix == nil {
		return resp, err
	}
	var in proto.Message
	if err == nil {
		in = proto.Clone(resp)
	}
	out, err := h.fix(method, req, in, err)
	if out == nil {
		var zero T
		return zero, err
	}
	return out.(T), err
}

func (h *hook) Describe(ctx context.Context, r *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	resp, err := h.Server.Describe(ctx, r)
	return after(h, "Describe", r, resp, err)
}
func (h *hook) Configure(ctx context.Context, r *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	resp, err := h.Server.Configure(ctx, r)
	return after(h, "Configure", r, resp, err)
}
func (h *hook) Health(ctx context.Context, r *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	resp, err := h.Server.Health(ctx, r)
	return after(h, "Health", r, resp, err)
}
func (h *hook) GetServerTime(ctx context.Context, r *exchangev1.GetServerTimeRequest) (*exchangev1.GetServerTimeResponse, error) {
	resp, err := h.Server.GetServerTime(ctx, r)
	return after(h, "GetServerTime", r, resp, err)
}
func (h *hook) ListInstruments(ctx context.Context, r *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	resp, err := h.Server.ListInstruments(ctx, r)
	return after(h, "ListInstruments", r, resp, err)
}
func (h *hook) GetTickers(ctx context.Context, r *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	resp, err := h.Server.GetTickers(ctx, r)
	return after(h, "GetTickers", r, resp, err)
}
func (h *hook) GetOrderBook(ctx context.Context, r *exchangev1.GetOrderBookRequest) (*exchangev1.GetOrderBookResponse, error) {
	resp, err := h.Server.GetOrderBook(ctx, r)
	return after(h, "GetOrderBook", r, resp, err)
}
func (h *hook) GetCandles(ctx context.Context, r *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	resp, err := h.Server.GetCandles(ctx, r)
	return after(h, "GetCandles", r, resp, err)
}
func (h *hook) GetTrades(ctx context.Context, r *exchangev1.GetTradesRequest) (*exchangev1.GetTradesResponse, error) {
	resp, err := h.Server.GetTrades(ctx, r)
	return after(h, "GetTrades", r, resp, err)
}
func (h *hook) GetFundingRateHistory(ctx context.Context, r *exchangev1.GetFundingRateHistoryRequest) (*exchangev1.GetFundingRateHistoryResponse, error) {
	resp, err := h.Server.GetFundingRateHistory(ctx, r)
	return after(h, "GetFundingRateHistory", r, resp, err)
}
func (h *hook) PlaceOrder(ctx context.Context, r *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	resp, err := h.Server.PlaceOrder(ctx, r)
	return after(h, "PlaceOrder", r, resp, err)
}
func (h *hook) GetOrder(ctx context.Context, r *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	resp, err := h.Server.GetOrder(ctx, r)
	return after(h, "GetOrder", r, resp, err)
}
func (h *hook) ListOpenOrders(ctx context.Context, r *exchangev1.ListOpenOrdersRequest) (*exchangev1.ListOpenOrdersResponse, error) {
	resp, err := h.Server.ListOpenOrders(ctx, r)
	return after(h, "ListOpenOrders", r, resp, err)
}
func (h *hook) CancelAllOrders(ctx context.Context, r *exchangev1.CancelAllOrdersRequest) (*exchangev1.CancelAllOrdersResponse, error) {
	resp, err := h.Server.CancelAllOrders(ctx, r)
	return after(h, "CancelAllOrders", r, resp, err)
}
func (h *hook) ListFills(ctx context.Context, r *exchangev1.ListFillsRequest) (*exchangev1.ListFillsResponse, error) {
	resp, err := h.Server.ListFills(ctx, r)
	return after(h, "ListFills", r, resp, err)
}
func (h *hook) ListFundingPayments(ctx context.Context, r *exchangev1.ListFundingPaymentsRequest) (*exchangev1.ListFundingPaymentsResponse, error) {
	resp, err := h.Server.ListFundingPayments(ctx, r)
	return after(h, "ListFundingPayments", r, resp, err)
}
func (h *hook) ListAlgoOrders(ctx context.Context, r *exchangev1.ListAlgoOrdersRequest) (*exchangev1.ListAlgoOrdersResponse, error) {
	resp, err := h.Server.ListAlgoOrders(ctx, r)
	return after(h, "ListAlgoOrders", r, resp, err)
}
func (h *hook) ClosePosition(ctx context.Context, r *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	resp, err := h.Server.ClosePosition(ctx, r)
	return after(h, "ClosePosition", r, resp, err)
}
func (h *hook) CheckCredentials(ctx context.Context, r *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	resp, err := h.Server.CheckCredentials(ctx, r)
	return after(h, "CheckCredentials", r, resp, err)
}
func (h *hook) GetBalances(ctx context.Context, r *exchangev1.GetBalancesRequest) (*exchangev1.GetBalancesResponse, error) {
	resp, err := h.Server.GetBalances(ctx, r)
	return after(h, "GetBalances", r, resp, err)
}
func (h *hook) Transfer(ctx context.Context, r *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	resp, err := h.Server.Transfer(ctx, r)
	return after(h, "Transfer", r, resp, err)
}
func (h *hook) GetDepositAddress(ctx context.Context, r *exchangev1.GetDepositAddressRequest) (*exchangev1.GetDepositAddressResponse, error) {
	resp, err := h.Server.GetDepositAddress(ctx, r)
	return after(h, "GetDepositAddress", r, resp, err)
}
func (h *hook) AmendOrder(ctx context.Context, r *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	resp, err := h.Server.AmendOrder(ctx, r)
	return after(h, "AmendOrder", r, resp, err)
}
func (h *hook) CancelOrder(ctx context.Context, r *exchangev1.CancelOrderRequest) (*exchangev1.CancelOrderResponse, error) {
	resp, err := h.Server.CancelOrder(ctx, r)
	return after(h, "CancelOrder", r, resp, err)
}
func (h *hook) CreateSubAccount(ctx context.Context, r *exchangev1.CreateSubAccountRequest) (*exchangev1.CreateSubAccountResponse, error) {
	resp, err := h.Server.CreateSubAccount(ctx, r)
	return after(h, "CreateSubAccount", r, resp, err)
}
func (h *hook) SubAccountTransfer(ctx context.Context, r *exchangev1.SubAccountTransferRequest) (*exchangev1.SubAccountTransferResponse, error) {
	resp, err := h.Server.SubAccountTransfer(ctx, r)
	return after(h, "SubAccountTransfer", r, resp, err)
}
func (h *hook) GetSubAccountBalances(ctx context.Context, r *exchangev1.GetSubAccountBalancesRequest) (*exchangev1.GetSubAccountBalancesResponse, error) {
	resp, err := h.Server.GetSubAccountBalances(ctx, r)
	return after(h, "GetSubAccountBalances", r, resp, err)
}
func (h *hook) GetConvertQuote(ctx context.Context, r *exchangev1.GetConvertQuoteRequest) (*exchangev1.GetConvertQuoteResponse, error) {
	resp, err := h.Server.GetConvertQuote(ctx, r)
	return after(h, "GetConvertQuote", r, resp, err)
}

type marketStream struct {
	exchangev1.Exchange_StreamMarketServer
	rewrite func(*exchangev1.MarketEvent) *exchangev1.MarketEvent
}

func (s marketStream) Send(ev *exchangev1.MarketEvent) error {
	if ev = s.rewrite(proto.Clone(ev).(*exchangev1.MarketEvent)); ev == nil {
		return nil
	}
	return s.Exchange_StreamMarketServer.Send(ev)
}

func (h *hook) StreamMarket(st exchangev1.Exchange_StreamMarketServer) error {
	if h.market == nil {
		return h.Server.StreamMarket(st)
	}
	return h.Server.StreamMarket(marketStream{st, h.market})
}

type accountStream struct {
	exchangev1.Exchange_StreamAccountServer
	rewrite func(*exchangev1.AccountEvent) *exchangev1.AccountEvent
}

func (s accountStream) Send(ev *exchangev1.AccountEvent) error {
	if ev = s.rewrite(proto.Clone(ev).(*exchangev1.AccountEvent)); ev == nil {
		return nil
	}
	return s.Exchange_StreamAccountServer.Send(ev)
}

func (h *hook) StreamAccount(r *exchangev1.StreamAccountRequest, st exchangev1.Exchange_StreamAccountServer) error {
	if h.account == nil {
		return h.Server.StreamAccount(r, st)
	}
	return h.Server.StreamAccount(r, accountStream{st, h.account})
}

// fixOne breaks one method's answer.
func fixOne[T proto.Message](method string, f func(req proto.Message, resp T, err error) (proto.Message, error)) func(*sdktest.Server) exchangev1.ExchangeServer {
	return func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
			if m != method {
				return resp, err
			}
			var r T
			if resp != nil {
				r = resp.(T)
			}
			return f(req, r, err)
		}}
	}
}

// reasonSwap turns one error reason into another on method (losing the typed reason is a classic plugin bug).
func reasonSwap(method string, from, to exchangev1.ErrorReason) func(*sdktest.Server) exchangev1.ExchangeServer {
	return func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, fix: func(m string, _, resp proto.Message, err error) (proto.Message, error) {
			if m == method && err != nil && sdk.DetailOf(err).GetReason() == from {
				return nil, sdk.Errorf(to, "%s", sdk.MessageOf(err))
			}
			return resp, err
		}}
	}
}

func dropMarket(keep func(*exchangev1.MarketEvent) bool) func(*sdktest.Server) exchangev1.ExchangeServer {
	return func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, market: func(ev *exchangev1.MarketEvent) *exchangev1.MarketEvent {
			if !keep(ev) {
				return nil
			}
			return ev
		}}
	}
}

// defects holds, for every conformance check, the reference exchange with the one defect that check catches.
var defects = map[string]func(*sdktest.Server) exchangev1.ExchangeServer{
	"describe": fixOne("Describe", func(_ proto.Message, r *exchangev1.DescribeResponse, err error) (proto.Message, error) {
		r.Exchange.Slug = "Not A Slug"
		return r, err
	}),
	"configure-rejects-unknown-key": fixOne("Configure", func(proto.Message, *exchangev1.ConfigureResponse, error) (proto.Message, error) {
		return &exchangev1.ConfigureResponse{}, nil
	}),
	"health": fixOne("Health", func(_ proto.Message, r *exchangev1.HealthResponse, err error) (proto.Message, error) {
		r.Ok = false
		return r, err
	}),
	"server-time": fixOne("GetServerTime", func(_ proto.Message, r *exchangev1.GetServerTimeResponse, err error) (proto.Message, error) {
		r.Time /= 1000 // seconds instead of milliseconds
		return r, err
	}),
	"instruments": fixOne("ListInstruments", func(_ proto.Message, r *exchangev1.ListInstrumentsResponse, err error) (proto.Message, error) {
		r.Instruments[0].StepSize += "0" // "0.0010": not canonical
		return r, err
	}),
	"tickers": fixOne("GetTickers", func(_ proto.Message, r *exchangev1.GetTickersResponse, err error) (proto.Message, error) {
		t := r.Tickers[0]
		t.Bid, t.Ask = t.Ask, t.Bid
		return r, err
	}),
	"order-book": fixOne("GetOrderBook", crossBook),
	"candles":    fixOne("GetCandles", reverseCandles),
	"candle-paging": fixOne("GetCandles", func(req proto.Message, r *exchangev1.GetCandlesResponse, err error) (proto.Message, error) {
		if q := req.(*exchangev1.GetCandlesRequest); err == nil && q.EndTime != 0 && q.StartTime == 0 && len(r.Candles) > 1 {
			r.Candles = r.Candles[:len(r.Candles)-1] // an exclusive end_time
		}
		return r, err
	}),
	"candle-range": fixOne("GetCandles", func(req proto.Message, r *exchangev1.GetCandlesResponse, err error) (proto.Message, error) {
		if q := req.(*exchangev1.GetCandlesRequest); err == nil && q.StartTime != 0 && len(r.Candles) > 1 {
			r.Candles = r.Candles[:len(r.Candles)-1]
		}
		return r, err
	}),
	"trades": fixOne("GetTrades", func(_ proto.Message, r *exchangev1.GetTradesResponse, err error) (proto.Message, error) {
		if len(r.Trades) > 1 {
			r.Trades[1].Id = r.Trades[0].Id
		}
		return r, err
	}),
	"derivatives-series": fixOne("GetFundingRateHistory", func(_ proto.Message, r *exchangev1.GetFundingRateHistoryResponse, err error) (proto.Message, error) {
		slices.Reverse(r.Rates)
		return r, err
	}),
	"error-instrument-not-found": reasonSwap("GetOrderBook", exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT),
	"stream-book": func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, market: func(ev *exchangev1.MarketEvent) *exchangev1.MarketEvent {
			if d := ev.GetBookDelta(); d != nil {
				d.PrevSequence = d.Sequence // no chain to the event before
			}
			return ev
		}}
	},
	"stream-trades":     dropMarket(func(ev *exchangev1.MarketEvent) bool { return ev.GetTrade() == nil }),
	"stream-ticker":     dropMarket(func(ev *exchangev1.MarketEvent) bool { return ev.GetTicker() == nil }),
	"stream-candles":    dropMarket(func(ev *exchangev1.MarketEvent) bool { return ev.GetCandle() == nil }),
	"stream-mark-price": dropMarket(func(ev *exchangev1.MarketEvent) bool { return ev.GetMarkPrice() == nil }),
	"trading-round-trip": fixOne("ListOpenOrders", func(_ proto.Message, r *exchangev1.ListOpenOrdersResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Orders = nil
		}
		return r, err
	}),
	"idempotent-client-order-id": func(s *sdktest.Server) exchangev1.ExchangeServer {
		// A repeated client id with other parameters returns the first order instead of being refused.
		return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
			if m == "PlaceOrder" && sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
				q := req.(*exchangev1.PlaceOrderRequest)
				o, gerr := s.GetOrder(context.Background(), &exchangev1.GetOrderRequest{Account: q.Account, ClientOrderId: q.ClientOrderId})
				if gerr == nil {
					return &exchangev1.PlaceOrderResponse{Order: o.Order}, nil
				}
			}
			return resp, err
		}}
	},
	"cancel-all": func(s *sdktest.Server) exchangev1.ExchangeServer {
		// The symbol is ignored: every order of the market type goes.
		return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
			if m == "CancelAllOrders" && err == nil {
				q := proto.Clone(req).(*exchangev1.CancelAllOrdersRequest)
				q.Symbol = ""
				return s.CancelAllOrders(context.Background(), q)
			}
			return resp, err
		}}
	},
	"error-precision":            reasonSwap("PlaceOrder", exchangev1.ErrorReason_ERROR_REASON_PRECISION, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT),
	"error-order-not-found":      reasonSwap("GetOrder", exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_INTERNAL),
	"error-unknown-symbol-order": reasonSwap("PlaceOrder", exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT),
	"error-insufficient-funds":   reasonSwap("PlaceOrder", exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED),
	"market-capabilities": fixOne("Describe", func(_ proto.Message, r *exchangev1.DescribeResponse, err error) (proto.Message, error) {
		m := r.Capabilities.Trading.Markets[0]
		m.AlgoOrderTypes = append(m.AlgoOrderTypes, exchangev1.OrderType_ORDER_TYPE_LIMIT)
		return r, err
	}),
	"check-credentials": fixOne("CheckCredentials", func(_ proto.Message, r *exchangev1.CheckCredentialsResponse, err error) (proto.Message, error) {
		if err == nil {
			r.CanRead = false
		}
		return r, err
	}),
	"account-stream": func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, account: func(ev *exchangev1.AccountEvent) *exchangev1.AccountEvent {
			if ev.Sequence > 1 {
				ev.Sequence++ // a gap after the snapshot
			}
			return ev
		}}
	},
	"positions-leverage": fixOne("ClosePosition", func(_ proto.Message, r *exchangev1.ClosePositionResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Order.ClientOrderId = ""
		}
		return r, err
	}),
	"algo-orders": fixOne("ListAlgoOrders", func(_ proto.Message, r *exchangev1.ListAlgoOrdersResponse, err error) (proto.Message, error) {
		if err == nil {
			r.AlgoOrders = nil
		}
		return r, err
	}),
	"fills-history": fixOne("ListFills", func(_ proto.Message, r *exchangev1.ListFillsResponse, err error) (proto.Message, error) {
		if err == nil {
			r.NextCursor = ""
		}
		return r, err
	}),
	"unknown-outcome":       reasonSwap("PlaceOrder", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE),
	"unknown-outcome-amend": reasonSwap("AmendOrder", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE),
	// A plugin that does not claim price_match answers a price-match order with an untyped error.
	"price-match": func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
			if r, ok := req.(*exchangev1.PlaceOrderRequest); ok && m == "PlaceOrder" && r.GetPriceMatch() != 0 && err != nil {
				return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s", sdk.MessageOf(err))
			}
			return resp, err
		}}
	},
	// A plugin that does not claim TP/SL on entry answers an entry with one with an untyped error.
	"tpsl-on-entry": func(s *sdktest.Server) exchangev1.ExchangeServer {
		return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
			if r, ok := req.(*exchangev1.PlaceOrderRequest); ok && m == "PlaceOrder" && r.GetTakeProfit() != nil && err != nil {
				return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s", sdk.MessageOf(err))
			}
			return resp, err
		}}
	},
	// Funding amounts with the sign the wrong way round (paid shown as received).
	"funding-payments": fixOne("ListFundingPayments", func(_ proto.Message, r *exchangev1.ListFundingPaymentsResponse, err error) (proto.Message, error) {
		if err == nil {
			for _, p := range r.Payments {
				if strings.HasPrefix(p.Amount, "-") {
					p.Amount = p.Amount[1:]
				} else {
					p.Amount = "-" + p.Amount
				}
			}
		}
		return r, err
	}),
	"wallet-balances": fixOne("GetBalances", func(_ proto.Message, r *exchangev1.GetBalancesResponse, err error) (proto.Message, error) {
		if err == nil && len(r.Balances) > 0 {
			r.Balances[0].Available = r.Balances[0].Total + "1"
		}
		return r, err
	}),
	"wallet-transfer": fixOne("Transfer", func(_ proto.Message, r *exchangev1.TransferResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Transfer.Status = exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
		}
		return r, err
	}),
	"wallet-deposit-address": fixOne("GetDepositAddress", func(_ proto.Message, r *exchangev1.GetDepositAddressResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Address = ""
		}
		return r, err
	}),
	// A repeated label creates another sub-account.
	"broker-sub-account": fixOne("CreateSubAccount", func(_ proto.Message, r *exchangev1.CreateSubAccountResponse, err error) (proto.Message, error) {
		if err == nil && r.Existing {
			r.Existing = false
			r.SubAccount.SubAccountId += "0"
		}
		return r, err
	}),
	// The sub-account's balance is misreported (a digit too many).
	"broker-transfer": fixOne("GetSubAccountBalances", func(_ proto.Message, r *exchangev1.GetSubAccountBalancesResponse, err error) (proto.Message, error) {
		if err == nil {
			for _, b := range r.Balances {
				b.Total += "1"
			}
		}
		return r, err
	}),
	// A cancel that reports the order still open.
	"broker-sub-account-trading": fixOne("CancelOrder", func(_ proto.Message, r *exchangev1.CancelOrderResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Order.Status = exchangev1.OrderStatus_ORDER_STATUS_NEW
		}
		return r, err
	}),
	// A lost transfer answer reported as an outage: the host would take it as not done.
	"broker-unknown-outcome": reasonSwap("SubAccountTransfer", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE),
	"wallet-convert-quote": fixOne("GetConvertQuote", func(_ proto.Message, r *exchangev1.GetConvertQuoteResponse, err error) (proto.Message, error) {
		if err == nil {
			r.Quote.QuoteId = ""
		}
		return r, err
	}),
}

func crossBook(_ proto.Message, r *exchangev1.GetOrderBookResponse, err error) (proto.Message, error) {
	if err == nil && len(r.Book.Bids) > 0 && len(r.Book.Asks) > 0 {
		r.Book.Bids[0].Price = r.Book.Asks[0].Price
	}
	return r, err
}

func reverseCandles(_ proto.Message, r *exchangev1.GetCandlesResponse, err error) (proto.Message, error) {
	if err == nil {
		slices.Reverse(r.Candles)
	}
	return r, err
}

// multiBroken has three defects at once: candles newest first, a crossed book, and a missing order's typed reason
// lost.
func multiBroken(s *sdktest.Server) exchangev1.ExchangeServer {
	notFound := reasonSwap("GetOrder", exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_INTERNAL)(s).(*hook).fix
	return &hook{Server: s, fix: func(m string, req, resp proto.Message, err error) (proto.Message, error) {
		switch m {
		case "GetCandles":
			var r *exchangev1.GetCandlesResponse
			if resp != nil {
				r = resp.(*exchangev1.GetCandlesResponse)
			}
			return reverseCandles(req, r, err)
		case "GetOrderBook":
			var r *exchangev1.GetOrderBookResponse
			if resp != nil {
				r = resp.(*exchangev1.GetOrderBookResponse)
			}
			return crossBook(req, r, err)
		}
		return notFound(m, req, resp, err)
	}}
}
