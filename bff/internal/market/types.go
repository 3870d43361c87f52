package market

// The JSON shapes of the market API. Decimals are strings in canonical form exactly as the plugin returns them;
// times are Unix milliseconds. The API package uses these types as response bodies, so their tags carry the
// OpenAPI documentation.

// Instrument is one tradable market.
type Instrument struct {
	Symbol             string `json:"symbol" doc:"Exchange symbol, as used in routes." example:"BTCUSDT"`
	Type               string `json:"type" enum:"SPOT,SWAP" doc:"SPOT or SWAP (USDT-margined perpetual)." example:"SWAP"`
	Base               string `json:"base" example:"BTC"`
	Quote              string `json:"quote" example:"USDT"`
	Settle             string `json:"settle" doc:"Settlement asset (SWAP); empty for SPOT." example:"USDT"`
	Status             string `json:"status" doc:"Always TRADING: other instruments are filtered out." example:"TRADING"`
	TickSize           string `json:"tickSize" doc:"Price grid." example:"0.1"`
	MinPrice           string `json:"minPrice" doc:"Lowest accepted price; empty when the exchange sets none." example:"0.1"`
	MaxPrice           string `json:"maxPrice" doc:"Highest accepted price; empty when the exchange sets none." example:"1000000"`
	StepSize           string `json:"stepSize" doc:"Quantity grid of limit orders, in base units." example:"0.001"`
	MinQty             string `json:"minQty" doc:"Smallest limit order quantity, in base units." example:"0.001"`
	MaxQty             string `json:"maxQty" doc:"Largest limit order quantity, in base units." example:"1000"`
	MarketStepSize     string `json:"marketStepSize" doc:"Quantity grid of market orders, in base units." example:"0.001"`
	MarketMinQty       string `json:"marketMinQty" example:"0.001"`
	MarketMaxQty       string `json:"marketMaxQty" example:"120"`
	MinNotional        string `json:"minNotional" doc:"Smallest order value in the quote asset; empty when none." example:"5"`
	ContractValue      string `json:"contractValue" doc:"SWAP: base units per contract; \"1\" when the exchange trades in base units." example:"1"`
	ContractValueAsset string `json:"contractValueAsset" example:"BTC"`
	MaxLeverage        string `json:"maxLeverage" doc:"Highest leverage. SWAP: the exchange's value, or 5 when it gives none. SPOT: 1." example:"100"`
	Family             string `json:"family" doc:"Instrument family, when the exchange has one." example:"BTC-USDT"`
	ListedTime         int64  `json:"listedTime" doc:"Listing time (Unix ms); 0 when unknown." example:"1569398400000"`
}

// Ticker is one market's 24-hour statistics and best prices.
type Ticker struct {
	Symbol          string `json:"symbol" example:"BTCUSDT"`
	Type            string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
	Last            string `json:"last" doc:"Last traded price." example:"65012.3"`
	Open24h         string `json:"open24h" doc:"Reference open of the 24h change." example:"63990.1"`
	High24h         string `json:"high24h" example:"65500"`
	Low24h          string `json:"low24h" example:"63500.5"`
	Volume24h       string `json:"volume24h" doc:"24h volume in base units." example:"12345.678"`
	QuoteVolume24h  string `json:"quoteVolume24h" doc:"24h volume in the quote asset (USDT)." example:"801234567.89"`
	ChangePct24h    string `json:"changePct24h" doc:"24h change in percent: \"-2.15\" is -2.15 %." example:"1.6"`
	Bid             string `json:"bid" example:"65012.2"`
	BidQty          string `json:"bidQty" example:"1.2"`
	Ask             string `json:"ask" example:"65012.3"`
	AskQty          string `json:"askQty" example:"0.8"`
	MarkPrice       string `json:"markPrice" doc:"SWAP only; empty for SPOT." example:"65010.9"`
	IndexPrice      string `json:"indexPrice" doc:"SWAP only." example:"65005.2"`
	FundingRate     string `json:"fundingRate" doc:"SWAP only: the current period's rate as a fraction (0.0001 = 0.01 %)." example:"0.0001"`
	NextFundingTime int64  `json:"nextFundingTime" doc:"SWAP only (Unix ms); 0 when unknown." example:"1767225600000"`
	OpenInterest    string `json:"openInterest" doc:"SWAP only, in base units." example:"81234.5"`
	Time            int64  `json:"time" doc:"When the exchange computed the ticker (Unix ms)." example:"1767200000000"`
}

// Mover is one row of the home page's biggest 24-hour movers.
type Mover struct {
	Exchange       int    `json:"exchange" doc:"Exchange key." example:"1"`
	ExchangeSlug   string `json:"exchangeSlug" example:"binance"`
	Type           string `json:"type" enum:"SPOT,SWAP" doc:"Always SWAP: the home tiles open futures markets." example:"SWAP"`
	Symbol         string `json:"symbol" example:"SOLUSDT"`
	Base           string `json:"base" example:"SOL"`
	Last           string `json:"last" doc:"Empty for a default-set row without a ticker." example:"151.23"`
	ChangePct24h   string `json:"changePct24h" doc:"Percent; empty for a default-set row without a ticker." example:"-6.4"`
	QuoteVolume24h string `json:"quoteVolume24h" example:"91234567.1"`
	Default        bool   `json:"default" doc:"True when the row comes from the default set (BTC, ETH, SOL, XRP, DOGE) because fewer than limit markets had a 24h change."`
}

// Candle is one OHLCV bar.
type Candle struct {
	OpenTime    int64  `json:"openTime" doc:"Open time (Unix ms)." example:"1767199980000"`
	Open        string `json:"open" example:"65001.2"`
	High        string `json:"high" example:"65020"`
	Low         string `json:"low" example:"64990.1"`
	Close       string `json:"close" example:"65012.3"`
	Volume      string `json:"volume" doc:"Base units." example:"12.345"`
	QuoteVolume string `json:"quoteVolume" example:"802468.2"`
	Trades      int64  `json:"trades" example:"321"`
	Closed      bool   `json:"closed" doc:"False for the candle still forming."`
}

// PriceLevel is one order book level.
type PriceLevel struct {
	Price string `json:"price" example:"65012.3"`
	Qty   string `json:"qty" doc:"Base units." example:"0.75"`
}

// OrderBook is a depth snapshot.
type OrderBook struct {
	Bids     []PriceLevel `json:"bids" doc:"Best (highest) first."`
	Asks     []PriceLevel `json:"asks" doc:"Best (lowest) first."`
	Sequence int64        `json:"sequence" doc:"The exchange's book sequence (update id) of this snapshot."`
	Time     int64        `json:"time" doc:"Snapshot time (Unix ms)." example:"1767200000000"`
}

// Trade is one public trade.
type Trade struct {
	ID       string `json:"id" example:"28457"`
	Price    string `json:"price" example:"65012.3"`
	Qty      string `json:"qty" doc:"Base units." example:"0.012"`
	QuoteQty string `json:"quoteQty" example:"780.1476"`
	Side     string `json:"side" enum:"buy,sell" doc:"Taker side."`
	Time     int64  `json:"time" example:"1767200000000"`
}

// Freshness says how current a response is. Stale responses carry the last good value after a failed refresh.
type Freshness struct {
	AsOf        int64  `json:"asOf" doc:"When the data was fetched from the exchange (Unix ms)." example:"1767200000000"`
	Stale       bool   `json:"stale" doc:"True when the exchange or its plugin failed and this is the last good value; the response then also has the header X-Exhub-Stale: true."`
	StaleReason string `json:"staleReason,omitempty" doc:"Why a stale value is served." example:"plugin is not running"`
}
