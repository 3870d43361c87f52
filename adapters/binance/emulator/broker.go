package emulator

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/exhub/exhub/adapters/venue"
)

// Binance Link (broker) sub-accounts. Only a key registered with Broker set (the demo key) may call these
// endpoints; any other key gets -2015. A sub-account is a venue account "<master>/sub<id>" under the master's; a key
// created for it is accepted by every private endpoint for that account.
//
// Spot and USD-M futures share the venue's trading wallet, so a broker transfer (spot) and a broker futures
// transfer move the same balance; each keeps its own history, as Binance does.

// brokerSubAccountIDBase is the first sub-account id; ids are numeric strings like Binance's.
const brokerSubAccountIDBase = 40000000

func (s *Server) brokerRoutes(mux *http.ServeMux) {
	b := func(weight int, fn func(*req) (any, error)) route {
		return route{sec: secSigned, weight: weight, fn: s.brokerOnly(fn)}
	}
	s.handle(mux, "POST /sapi/v1/broker/subAccount", b(1, s.brokerCreateSub))
	s.handle(mux, "GET /sapi/v1/broker/subAccount", b(1, s.brokerListSubs))
	s.handle(mux, "POST /sapi/v1/broker/subAccountApi", b(8, s.brokerCreateKey))
	s.handle(mux, "POST /sapi/v1/broker/subAccount/futures", b(1, s.brokerEnableFutures))
	s.handle(mux, "POST /sapi/v1/broker/transfer", route{sec: secSigned, weight: 1, clientIDs: paramIDs("clientTranId"),
		fn: s.brokerOnly(s.brokerTransfer(false))})
	s.handle(mux, "GET /sapi/v1/broker/transfer", b(1, s.brokerTransferHistory))
	s.handle(mux, "POST /sapi/v1/broker/transfer/futures", route{sec: secSigned, weight: 1, clientIDs: paramIDs("clientTranId"),
		fn: s.brokerOnly(s.brokerTransfer(true))})
	s.handle(mux, "GET /sapi/v1/broker/transfer/futures", b(1, s.brokerFuturesTransferHistory))
	s.handle(mux, "GET /sapi/v3/sub-account/assets", b(60, s.subAccountAssets))
}

// brokerOnly refuses every key but a broker master's.
func (s *Server) brokerOnly(fn func(*req) (any, error)) func(*req) (any, error) {
	return func(q *req) (any, error) {
		s.mu.Lock()
		c := s.creds[q.apiKey]
		s.mu.Unlock()
		if !c.Broker {
			return nil, errf(http.StatusUnauthorized, codeRejectedMBXKey, "Invalid API-key, IP, or permissions for action.")
		}
		return fn(q)
	}
}

// subAccountKey reports whether an API key is a broker sub-account's (made by brokerCreateKey). Binance gives such
// keys no withdraw permission: only the master withdraws.
func (s *Server) subAccountKey(key string) bool {
	s.mu.Lock()
	c := s.creds[key]
	s.mu.Unlock()
	master, _, ok := strings.Cut(c.Account, "/sub")
	if !ok {
		return false
	}
	_, err := s.v.SubAccountOf(master, c.Account)
	return err == nil
}

// subAccountID turns a venue sub-account id into Binance's numeric id and back.
func (s *Server) subVenueID(master, id string) string { return master + "/sub" + id }

func subNumericID(venueID string) string {
	_, id, _ := strings.Cut(venueID, "/sub")
	return id
}

func (s *Server) subEmail(id string) string { return "exhub_" + id + "_brokersub@emulator.invalid" }

func (s *Server) subView(sa venue.SubAccount) map[string]any {
	id := subNumericID(sa.ID)
	return map[string]any{"subaccountId": id, "email": s.subEmail(id), "tag": sa.Label, "makerCommission": "0.001",
		"takerCommission": "0.001", "marginMakerCommission": "-1", "marginTakerCommission": "-1", "createTime": sa.Created}
}

func brokerError(err error) error {
	switch {
	case errors.Is(err, venue.ErrUnknownSubAccount), errors.Is(err, venue.ErrUnknownAccount):
		return errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'subAccountId' is not valid.")
	case errors.Is(err, venue.ErrDuplicateClientID):
		return errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'clientTranId' is not valid.")
	case errors.Is(err, venue.ErrTooManySubAccounts):
		return errf(http.StatusBadRequest, -3008, "Sub-account quantity exceeds the limit.")
	case errors.Is(err, venue.ErrInvalidOrder):
		return errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'toId' is not valid.")
	}
	return walletError(err)
}

// brokerCreateSub serves POST /sapi/v1/broker/subAccount (tag optional, under 32 characters). Binance makes a new
// sub-account on every call; the tag is not unique there, and the emulator keeps that: a repeated tag makes another.
func (s *Server) brokerCreateSub(q *req) (any, error) {
	tag := q.str("tag")
	if len(tag) >= 32 {
		return nil, illegal("tag")
	}
	s.mu.Lock()
	s.nextSub++
	id := strconv.FormatInt(brokerSubAccountIDBase+s.nextSub, 10)
	s.mu.Unlock()
	// The venue's label is unique per master; Binance's tag is not, so the venue label is the id.
	sa, err := s.v.CreateSubAccount(s.ctx, q.account, s.subVenueID(q.account, id), id)
	if err != nil {
		return nil, brokerError(err)
	}
	s.mu.Lock()
	s.subTags[sa.ID] = tag
	s.mu.Unlock()
	return map[string]any{"subaccountId": id, "email": s.subEmail(id), "tag": tag}, nil
}

// brokerListSubs serves GET /sapi/v1/broker/subAccount (subAccountId, page from 1, size up to 500, default 500).
func (s *Server) brokerListSubs(q *req) (any, error) {
	page, err := q.intParam("page", 1)
	if err != nil || page < 1 {
		return nil, illegal("page")
	}
	size, err := q.intParam("size", 500)
	if err != nil || size < 1 || size > 500 {
		return nil, illegal("size")
	}
	subs, err := s.v.SubAccounts(q.account)
	if err != nil {
		return nil, brokerError(err)
	}
	only := q.str("subAccountId")
	out := []map[string]any{}
	skip := (page - 1) * size
	for _, sa := range subs {
		if only != "" && subNumericID(sa.ID) != only {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == size {
			break
		}
		v := s.subView(sa)
		s.mu.Lock()
		v["tag"] = s.subTags[sa.ID]
		s.mu.Unlock()
		out = append(out, v)
	}
	return out, nil
}

// brokerEnableFutures serves POST /sapi/v1/broker/subAccount/futures (subAccountId, futures=true). Futures is
// always on in the venue; the call only checks the sub-account.
func (s *Server) brokerEnableFutures(q *req) (any, error) {
	id := q.str("subAccountId")
	if id == "" {
		return nil, badParam("subAccountId")
	}
	if q.str("futures") != "true" {
		return nil, illegal("futures")
	}
	if _, err := s.v.SubAccountOf(q.account, s.subVenueID(q.account, id)); err != nil {
		return nil, brokerError(err)
	}
	return map[string]any{"subaccountId": id, "enableFutures": true, "updateTime": s.v.Now()}, nil
}

// brokerCreateKey serves POST /sapi/v1/broker/subAccountApi: a new HMAC key of the sub-account. canTrade (spot) is
// required; futuresTrade and marginTrade are optional. Broker keys never withdraw.
func (s *Server) brokerCreateKey(q *req) (any, error) {
	id := q.str("subAccountId")
	if id == "" {
		return nil, badParam("subAccountId")
	}
	if !q.has("canTrade") {
		return nil, badParam("canTrade")
	}
	canTrade, err := q.boolParam("canTrade")
	if err != nil {
		return nil, err
	}
	futures, err := q.boolParam("futuresTrade")
	if err != nil {
		return nil, err
	}
	margin, err := q.boolParam("marginTrade")
	if err != nil {
		return nil, err
	}
	sa, err := s.v.SubAccountOf(q.account, s.subVenueID(q.account, id))
	if err != nil {
		return nil, brokerError(err)
	}
	key, secret := randomToken(64), randomToken(64)
	if err := s.AddCredential(Credential{Key: key, Secret: secret, Account: sa.ID}); err != nil {
		return nil, err
	}
	s.SetPermissions(key, Permissions{EnableReading: true, EnableSpotAndMargin: canTrade, EnableFutures: futures})
	return map[string]any{"subaccountId": id, "apiKey": key, "secretKey": secret, "canTrade": canTrade,
		"marginTrade": margin, "futuresTrade": futures}, nil
}

// brokerTransfer serves POST /sapi/v1/broker/transfer (spot) and /sapi/v1/broker/transfer/futures (futuresType 1,
// USD-M): fromId and toId are sub-account ids, empty for the master; clientTranId must be unique.
func (s *Server) brokerTransfer(futures bool) func(*req) (any, error) {
	return func(q *req) (any, error) {
		if futures {
			switch q.str("futuresType") {
			case "":
				return nil, badParam("futuresType")
			case "1":
			default:
				return nil, illegal("futuresType")
			}
		}
		asset := strings.ToUpper(q.str("asset"))
		if asset == "" {
			return nil, badParam("asset")
		}
		amount, err := q.decimalParam("amount")
		if err != nil {
			return nil, err
		}
		if !amount.IsPositive() {
			return nil, illegal("amount")
		}
		cid := q.str("clientTranId")
		if cid == "" {
			// Binance assigns none; the venue needs one to keep the movement idempotent.
			cid = "emu" + randomToken(16)
		}
		if len(cid) > 32 {
			return nil, illegal("clientTranId")
		}
		side := func(id string) string {
			if id == "" {
				return ""
			}
			return s.subVenueID(q.account, id)
		}
		if q.str("fromId") == q.str("toId") {
			return nil, illegal("toId")
		}
		t, err := s.v.TransferSub(s.ctx, venue.SubTransferRequest{Master: q.account, From: side(q.str("fromId")),
			To: side(q.str("toId")), Asset: asset, Amount: amount, Wallet: venue.TradingWallet, ClientID: cid, Kind: transferKind(futures)})
		if err != nil {
			return nil, brokerError(err)
		}
		now := s.v.Now()
		s.pushUser(t.From, futures, mustJSON(map[string]any{"e": "balanceUpdate", "E": now, "a": asset, "d": amount.Neg().String(), "T": now}))
		s.pushUser(t.To, futures, mustJSON(map[string]any{"e": "balanceUpdate", "E": now, "a": asset, "d": amount.String(), "T": now}))
		out := map[string]any{"txnId": t.ID, "clientTranId": t.ClientID}
		if futures {
			out["success"] = true
		}
		return out, nil
	}
}

func transferKind(futures bool) string {
	if futures {
		return "futures"
	}
	return "spot"
}

// transfersOf lists the master's broker transfers of one kind (spot or futures), newest first.
func (s *Server) transfersOf(q *req, futures bool, clientID, account string) ([]venue.SubTransfer, error) {
	ts, err := s.v.SubTransfers(q.account, clientID, account, 0)
	if err != nil {
		return nil, brokerError(err)
	}
	out := ts[:0]
	for _, t := range ts {
		if t.Kind == transferKind(futures) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (s *Server) brokerSide(master, venueID string) string {
	if venueID == master {
		return ""
	}
	return subNumericID(venueID)
}

func timeRange(q *req) (int64, int64, error) {
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return 0, 0, err
	}
	end, err := q.int64Param("endTime", 0)
	return start, end, err
}

func inRange(t, start, end int64) bool { return (start == 0 || t >= start) && (end == 0 || t <= end) }

// brokerTransferHistory serves GET /sapi/v1/broker/transfer (fromId, toId, clientTranId, startTime, endTime, page,
// limit up to 500, default 500).
func (s *Server) brokerTransferHistory(q *req) (any, error) {
	start, end, err := timeRange(q)
	if err != nil {
		return nil, err
	}
	page, err := q.intParam("page", 1)
	if err != nil || page < 1 {
		return nil, illegal("page")
	}
	limit, err := q.intParam("limit", 500)
	if err != nil || limit < 1 || limit > 500 {
		return nil, illegal("limit")
	}
	ts, err := s.transfersOf(q, false, q.str("clientTranId"), "")
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	skip := (page - 1) * limit
	for _, t := range ts {
		from, to := s.brokerSide(q.account, t.From), s.brokerSide(q.account, t.To)
		if q.has("fromId") && from != q.str("fromId") || q.has("toId") && to != q.str("toId") || !inRange(t.Time, start, end) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, map[string]any{"fromId": from, "toId": to, "asset": t.Asset, "qty": t.Amount.String(),
			"time": t.Time, "txnId": t.ID, "clientTranId": t.ClientID, "status": "SUCCESS"})
	}
	return out, nil
}

// brokerFuturesTransferHistory serves GET /sapi/v1/broker/transfer/futures (subAccountId and futuresType required).
func (s *Server) brokerFuturesTransferHistory(q *req) (any, error) {
	id := q.str("subAccountId")
	if id == "" {
		return nil, badParam("subAccountId")
	}
	if q.str("futuresType") != "1" {
		return nil, illegal("futuresType")
	}
	start, end, err := timeRange(q)
	if err != nil {
		return nil, err
	}
	ts, err := s.transfersOf(q, true, q.str("clientTranId"), s.subVenueID(q.account, id))
	if err != nil {
		return nil, err
	}
	rows := []map[string]any{}
	for _, t := range ts {
		if !inRange(t.Time, start, end) {
			continue
		}
		rows = append(rows, map[string]any{"fromId": s.brokerSide(q.account, t.From), "toId": s.brokerSide(q.account, t.To),
			"asset": t.Asset, "qty": t.Amount.String(), "tranId": t.ID, "clientTranId": t.ClientID, "time": t.Time})
	}
	return map[string]any{"success": true, "futuresType": 1, "transfers": rows}, nil
}

// subAccountAssets serves GET /sapi/v3/sub-account/assets (email): the sub-account's spot balances. Binance sends
// free and locked as JSON numbers; the emulator writes them exactly (json.Number), never through a float.
func (s *Server) subAccountAssets(q *req) (any, error) {
	email := q.str("email")
	if email == "" {
		return nil, badParam("email")
	}
	id, ok := strings.CutPrefix(email, "exhub_")
	id, ok2 := strings.CutSuffix(id, "_brokersub@emulator.invalid")
	if !ok || !ok2 {
		return nil, errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'email' is not valid.")
	}
	sa, err := s.v.SubAccountOf(q.account, s.subVenueID(q.account, id))
	if err != nil {
		return nil, errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'email' is not valid.")
	}
	bs, err := s.v.Balances(sa.ID, venue.TradingWallet)
	if err != nil {
		return nil, walletError(err)
	}
	out := []map[string]any{}
	for _, b := range bs {
		if b.Total.IsZero() {
			continue
		}
		out = append(out, map[string]any{"asset": b.Asset, "free": json.Number(b.Free.String()),
			"locked": json.Number(b.Locked.String()), "freeze": json.Number("0"), "withdrawing": json.Number("0")})
	}
	return map[string]any{"balances": out}, nil
}

// randomToken is n random letters and digits, like Binance's keys.
func randomToken(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
