package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/exhub/exhub/adapters/venue"
)

// OKX non-disclosed broker sub-accounts. Only a broker key (the demo key) may call /api/v5/broker/nd/..., the
// master's sub-account balance reads and asset/transfer types 1 and 2; others get 59608 or 59604. A sub-account is
// the venue account "<master>/<subAcct>"; a key created for it is accepted by every private endpoint and the private
// WebSocket for that account only.

func (s *Server) brokerRoutes() {
	s.route("POST", "/api/v5/broker/nd/create-subaccount", 2, true, s.brokerOnly(s.ndCreateSub))
	s.route("GET", "/api/v5/broker/nd/subaccount-info", 2, true, s.brokerOnly(s.ndSubInfo))
	s.route("POST", "/api/v5/broker/nd/subaccount/apikey", 2, true, s.brokerOnly(s.ndCreateKey))
	s.route("GET", "/api/v5/account/subaccount/balances", 6, true, s.masterOnly(s.subTradingBalances))
	s.route("GET", "/api/v5/asset/subaccount/balances", 6, true, s.masterOnly(s.subFundingBalances))
	s.route("GET", "/api/v5/asset/transfer-state", 10, true, s.transferState)
}

func (s *Server) brokerOnly(h handler) handler {
	return func(q *request) (result, *apiError) {
		if !q.key.Broker {
			return result{}, &apiError{http.StatusOK, "59608", "Only Broker accounts have permission for this operation"}
		}
		return h(q)
	}
}

func (s *Server) masterOnly(h handler) handler {
	return func(q *request) (result, *apiError) {
		if !q.key.Broker {
			return result{}, &apiError{http.StatusOK, "59604", "Only the API key of the main account has permission for this operation"}
		}
		return h(q)
	}
}

func subVenueID(master, name string) string { return master + "/" + name }

func subName(venueID string) string {
	_, name, _ := strings.Cut(venueID, "/")
	return name
}

func errNoSub() *apiError {
	return &apiError{http.StatusOK, "59510", "Sub-account does not exist"}
}

func subErr(err error) *apiError {
	switch {
	case errors.Is(err, venue.ErrUnknownSubAccount):
		return errNoSub()
	case errors.Is(err, venue.ErrSubAccountExists):
		return &apiError{http.StatusOK, "59601", "This sub-account name already exists, try another name"}
	case errors.Is(err, venue.ErrTooManySubAccounts):
		return &apiError{http.StatusOK, "59603", "Number of sub-accounts exceeds the limit"}
	case errors.Is(err, venue.ErrInsufficientFunds):
		return &apiError{http.StatusOK, "58350", "Insufficient balance"}
	case errors.Is(err, venue.ErrDuplicateClientID):
		return &apiError{http.StatusOK, "51000", "Parameter clientId error"}
	}
	return bizErr(err)
}

// validSubName: 6 to 20 letters and digits, at least one letter (OKX's rule).
func validSubName(n string) bool {
	if len(n) < 6 || len(n) > 20 {
		return false
	}
	letter := false
	for _, r := range n {
		switch {
		case r < 128 && unicode.IsLetter(r):
			letter = true
		case r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return letter
}

func (s *Server) subRow(sa venue.SubAccount) obj {
	return obj{"subAcct": subName(sa.ID), "label": sa.Label, "acctLv": "2", "ts": ms(sa.Created),
		"uid": strconv.FormatUint(uidOf(sa.ID), 10), "frozenFunc": []string{}, "firstLvSubAcct": subName(sa.ID)}
}

// uidOf is a stable numeric uid for an account id (FNV-1a, 16 digits at most).
func uidOf(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h % 1e16
}

// ndCreateSub serves POST /api/v5/broker/nd/create-subaccount {subAcct, label}.
func (s *Server) ndCreateSub(q *request) (result, *apiError) {
	var r struct {
		SubAcct string `json:"subAcct"`
		Label   string `json:"label"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if !validSubName(r.SubAcct) {
		return result{}, errParam("subAcct")
	}
	if len(r.Label) > 50 {
		return result{}, errParam("label")
	}
	// The venue's label is the unique name; OKX's label is a note, kept here.
	sa, err := s.v.CreateSubAccount(q.r.Context(), q.account, subVenueID(q.account, r.SubAcct), r.SubAcct)
	if err != nil {
		return result{}, subErr(err)
	}
	s.mu.Lock()
	s.subLabels[sa.ID] = r.Label
	s.mu.Unlock()
	row := s.subRow(sa)
	row["label"] = r.Label
	return result{data: []obj{{"subAcct": row["subAcct"], "label": r.Label, "acctLv": row["acctLv"], "ts": row["ts"],
		"uid": row["uid"]}}}, nil
}

// ndSubInfo serves GET /api/v5/broker/nd/subaccount-info (subAcct, uid, page, limit up to 100).
func (s *Server) ndSubInfo(q *request) (result, *apiError) {
	page, limit := 1, 100
	if v := q.get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return result{}, errParam("page")
		}
		page = n
	}
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return result{}, errParam("limit")
		}
		limit = n
	}
	subs, err := s.v.SubAccounts(q.account)
	if err != nil {
		return result{}, subErr(err)
	}
	name := q.get("subAcct")
	var rows []obj
	for _, sa := range subs {
		if name != "" && subName(sa.ID) != name {
			continue
		}
		row := s.subRow(sa)
		s.mu.Lock()
		row["label"] = s.subLabels[sa.ID]
		s.mu.Unlock()
		rows = append(rows, row)
	}
	total := (len(rows) + limit - 1) / limit
	lo := min((page-1)*limit, len(rows))
	hi := min(lo+limit, len(rows))
	details := rows[lo:hi]
	if details == nil {
		details = []obj{}
	}
	return result{data: []obj{{"totalPage": strconv.Itoa(total), "page": strconv.Itoa(page), "details": details}}}, nil
}

// validPassphrase: 8 to 32 characters with a lower and an upper case letter, a digit and a special character.
func validPassphrase(p string) bool {
	if len(p) < 8 || len(p) > 32 {
		return false
	}
	var lo, up, dg, sp bool
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z':
			lo = true
		case r >= 'A' && r <= 'Z':
			up = true
		case r >= '0' && r <= '9':
			dg = true
		case r > ' ' && r < 127:
			sp = true
		default:
			return false
		}
	}
	return lo && up && dg && sp
}

// ndCreateKey serves POST /api/v5/broker/nd/subaccount/apikey {subAcct, label, passphrase, perm, ip}.
func (s *Server) ndCreateKey(q *request) (result, *apiError) {
	var r struct {
		SubAcct    string `json:"subAcct"`
		Label      string `json:"label"`
		Passphrase string `json:"passphrase"`
		Perm       string `json:"perm"`
		IP         string `json:"ip"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if r.SubAcct == "" {
		return result{}, errEmpty("subAcct")
	}
	if r.Label == "" || len(r.Label) > 50 {
		return result{}, errParam("label")
	}
	if !validPassphrase(r.Passphrase) {
		return result{}, &apiError{http.StatusOK, "59505", "The passphrase format is incorrect."}
	}
	perms := []string{"read_only"}
	for _, p := range strings.Split(r.Perm, ",") {
		switch p = strings.TrimSpace(p); p {
		case "", "read_only":
		case "trade":
			perms = append(perms, p)
		default:
			return result{}, errParam("perm")
		}
	}
	var ips []string
	if r.IP != "" {
		ips = strings.Split(r.IP, ",")
		if len(ips) > 20 {
			return result{}, &apiError{http.StatusOK, "59503", "Each API key can bind up to 20 IP addresses"}
		}
	}
	sa, err := s.v.SubAccountOf(q.account, subVenueID(q.account, r.SubAcct))
	if err != nil {
		return result{}, subErr(err)
	}
	c := Credentials{APIKey: newUUID(), Secret: strings.ToUpper(randomHex(16)), Passphrase: r.Passphrase,
		Account: sa.ID, Perm: strings.Join(perms, ","), IPs: ips}
	s.addKey(c)
	return result{data: []obj{{"subAcct": r.SubAcct, "label": r.Label, "apiKey": c.APIKey, "secretKey": c.Secret,
		"passphrase": r.Passphrase, "perm": c.Perm, "ip": r.IP, "ts": ms(s.v.Now())}}}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails
	return hex.EncodeToString(b)
}

// newUUID is a random version 4 UUID, the form of OKX's API keys.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *Server) subOf(q *request) (venue.SubAccount, *apiError) {
	name := q.get("subAcct")
	if name == "" {
		return venue.SubAccount{}, errEmpty("subAcct")
	}
	sa, err := s.v.SubAccountOf(q.account, subVenueID(q.account, name))
	if err != nil {
		return venue.SubAccount{}, subErr(err)
	}
	return sa, nil
}

// subTradingBalances serves GET /api/v5/account/subaccount/balances?subAcct=: the sub-account's trading account, in
// the shape of GET /api/v5/account/balance.
func (s *Server) subTradingBalances(q *request) (result, *apiError) {
	sa, aerr := s.subOf(q)
	if aerr != nil {
		return result{}, aerr
	}
	o, err := s.accountObj(sa.ID, nil)
	if err != nil {
		return result{}, internal(err)
	}
	return result{data: []obj{o}}, nil
}

// subFundingBalances serves GET /api/v5/asset/subaccount/balances?subAcct=&ccy=: the sub-account's funding account.
func (s *Server) subFundingBalances(q *request) (result, *apiError) {
	sa, aerr := s.subOf(q)
	if aerr != nil {
		return result{}, aerr
	}
	bs, err := s.v.Balances(sa.ID, venue.Funding)
	if err != nil {
		return result{}, internal(err)
	}
	only := splitComma(q.get("ccy"))
	rows := []obj{}
	for _, b := range bs {
		if len(only) > 0 && !slices.Contains(only, b.Asset) {
			continue
		}
		rows = append(rows, obj{"ccy": b.Asset, "bal": dec(b.Total), "frozenBal": dec(b.Locked), "availBal": dec(b.Free)})
	}
	return result{data: rows}, nil
}

// subTransfer executes asset/transfer types 1 (master to sub-account) and 2 (sub-account to master, with the
// master's key). The venue moves within one wallet; when from and to differ the receiving account then moves the
// amount between its own wallets.
func (s *Server) subTransfer(q *request, typ, subAcct, ccy, clientID string, amtStr string, from, to venue.Wallet) (result, *apiError) {
	if !q.key.Broker {
		return result{}, &apiError{http.StatusOK, "59604", "Only the API key of the main account has permission for this operation"}
	}
	if subAcct == "" {
		return result{}, errEmpty("subAcct")
	}
	amt, err := venue.ParseDecimal(amtStr)
	if err != nil || !amt.IsPositive() {
		return result{}, errParam("amt")
	}
	sub := subVenueID(q.account, subAcct)
	if _, err := s.v.SubAccountOf(q.account, sub); err != nil {
		return result{}, subErr(err)
	}
	if clientID == "" {
		clientID = "emu" + randomHex(8)
	}
	req := venue.SubTransferRequest{Master: q.account, To: sub, Asset: ccy, Amount: amt, Wallet: from, ClientID: clientID,
		Kind: typ + "|" + strconv.Itoa(int(from)) + "|" + strconv.Itoa(int(to))}
	dest := sub
	if typ == "2" {
		req.From, req.To, dest = sub, "", q.account
	}
	t, err := s.v.TransferSub(q.r.Context(), req)
	if err != nil {
		return result{}, subErr(err)
	}
	if from != to {
		if _, err := s.v.Transfer(q.r.Context(), dest, ccy, amt, from, to); err != nil {
			s.log.Error("sub-account transfer: move to the destination wallet", "transfer", t.ID, "err", err)
		}
	}
	return result{data: []obj{{"transId": t.ID, "ccy": ccy, "clientId": t.ClientID, "from": walletCode(from),
		"amt": dec(amt), "to": walletCode(to)}}}, nil
}

func walletCode(w venue.Wallet) string {
	if w == venue.Funding {
		return "6"
	}
	return "18"
}

// transferState serves GET /api/v5/asset/transfer-state (transId or clientId; type). It finds the sub-account
// transfers of the caller as master. Like OKX, an id it does not know is 51000 "Parameter clientId error" (or
// transId), not an empty list.
func (s *Server) transferState(q *request) (result, *apiError) {
	transID, clientID := q.get("transId"), q.get("clientId")
	if transID == "" && clientID == "" {
		return result{}, errEmpty("transId")
	}
	notFound := errParam("clientId")
	if clientID == "" {
		notFound = errParam("transId")
	}
	if !q.key.Broker {
		return result{}, notFound
	}
	ts, err := s.v.SubTransfers(q.account, clientID, "", 0)
	if err != nil {
		return result{}, notFound
	}
	rows := []obj{}
	for _, t := range ts {
		if transID != "" && t.ID != transID {
			continue
		}
		parts := strings.Split(t.Kind, "|")
		if len(parts) != 3 {
			continue
		}
		if typ := q.get("type"); typ != "" && typ != parts[0] {
			continue
		}
		fw, _ := strconv.Atoi(parts[1])
		tw, _ := strconv.Atoi(parts[2])
		sub := t.To
		if parts[0] == "2" {
			sub = t.From
		}
		rows = append(rows, obj{"amt": dec(t.Amount), "ccy": t.Asset, "clientId": t.ClientID,
			"from": walletCode(venue.Wallet(fw)), "to": walletCode(venue.Wallet(tw)), "instId": "", "toInstId": "",
			"state": "success", "subAcct": subName(sub), "transId": t.ID, "type": parts[0]})
		break
	}
	if len(rows) == 0 {
		return result{}, notFound
	}
	return result{data: rows}, nil
}
