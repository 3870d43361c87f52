package account

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/store"
)

// FavoriteKey names a market: exchange slug, market type and symbol.
type FavoriteKey struct {
	Exchange   string `json:"exchange" pattern:"^[a-z0-9][a-z0-9-]{0,31}$" doc:"Exchange slug, such as binance"`
	MarketType string `json:"market_type" enum:"SPOT,SWAP"`
	Symbol     string `json:"symbol" pattern:"^[A-Za-z0-9._:/-]{1,40}$" doc:"The exchange's instrument symbol"`
}

func (k FavoriteKey) store() store.Favorite {
	return store.Favorite{Exchange: k.Exchange, MarketType: strings.ToUpper(k.MarketType), Symbol: k.Symbol}
}

// Favorite is a starred market.
type Favorite struct {
	FavoriteKey
	CreatedAt time.Time `json:"created_at"`
}

// Favorites is the member's starred markets, oldest first.
type Favorites struct {
	Favorites []Favorite `json:"favorites"`
}

// FavoriteChange is the answer of add and delete: whether anything changed ("Add optional success" /
// "Delete optional success": adding a present market or removing an absent one is not an error).
type FavoriteChange struct {
	Changed bool `json:"changed" doc:"true when the market was added (POST) or removed (DELETE); false when it already was or was not there"`
}

// FavoriteExists answers GET /api/v1/me/favorites/{exchange}/{market_type}/{symbol}.
type FavoriteExists struct {
	Exists bool `json:"exists"`
}

// FavoritesMerge is the browser's local favorites to merge on sign-in.
type FavoritesMerge struct {
	Favorites []FavoriteKey `json:"favorites" maxItems:"500"`
}

// MergeResult counts what a merge did and lists the favorites after it.
type MergeResult struct {
	Added     int        `json:"added" doc:"Newly stored"`
	Present   int        `json:"present" doc:"Already starred (or repeated in the input)"`
	Dropped   int        `json:"dropped" doc:"Left out because the member reached the limit of 500"`
	Favorites []Favorite `json:"favorites"`
}

type favoritePath struct {
	Exchange   string `path:"exchange" pattern:"^[a-z0-9][a-z0-9-]{0,31}$"`
	MarketType string `path:"market_type" enum:"SPOT,SWAP"`
	Symbol     string `path:"symbol" pattern:"^[A-Za-z0-9._:/-]{1,40}$" doc:"URL-encoded (a / is %2F)"`
}

type favoriteQuery struct {
	Exchange   string `query:"exchange" required:"true" pattern:"^[a-z0-9][a-z0-9-]{0,31}$"`
	MarketType string `query:"market_type" required:"true" enum:"SPOT,SWAP"`
	Symbol     string `query:"symbol" required:"true" pattern:"^[A-Za-z0-9._:/-]{1,40}$"`
}

func (r *routes) registerFavorites(api huma.API) {
	const base = "/api/v1/me/favorites"
	huma.Register(api, r.op("list-favorites", http.MethodGet, base, "The member's favorite markets",
		"Starred markets, oldest first."), r.listFavorites)
	huma.Register(api, r.op("add-favorite", http.MethodPost, base, "Star a market",
		"Adds a market; changed is false when it was already starred. 422 beyond 500 favorites.",
		http.StatusUnprocessableEntity), r.addFavorite)
	huma.Register(api, r.op("delete-favorite", http.MethodDelete, base, "Unstar a market",
		"Removes the market named by the query (exchange, market_type, symbol); changed is false when it was not "+
			"starred."), r.deleteFavorite)
	huma.Register(api, r.op("favorite-exists", http.MethodGet, base+"/{exchange}/{market_type}/{symbol}",
		"Is a market starred", "Whether the market is among the member's favorites."), r.favoriteExists)
	huma.Register(api, r.op("merge-favorites", http.MethodPost, base+":merge", "Merge local favorites",
		"Adds the browser's local favorites (kept before sign-in) to the member's, keeping their order; what is "+
			"already there stays. Idempotent.", http.StatusUnprocessableEntity), r.mergeFavorites)
}

func favoritesOf(list []store.Favorite) []Favorite {
	out := make([]Favorite, 0, len(list))
	for _, f := range list {
		out = append(out, Favorite{FavoriteKey: FavoriteKey{Exchange: f.Exchange, MarketType: f.MarketType, Symbol: f.Symbol},
			CreatedAt: f.CreatedAt.UTC()})
	}
	return out
}

func (r *routes) listFavorites(ctx context.Context, _ *struct{}) (*reply[Favorites], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.Members.Store().ListFavorites(ctx, m.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(Favorites{Favorites: favoritesOf(list)}), nil
}

func (r *routes) addFavorite(ctx context.Context, in *struct{ Body FavoriteKey }) (*reply[FavoriteChange], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	added, err := r.Members.Store().AddFavorite(ctx, m.ID, in.Body.store())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(FavoriteChange{Changed: added}), nil
}

func (r *routes) deleteFavorite(ctx context.Context, in *favoriteQuery) (*reply[FavoriteChange], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	k := FavoriteKey{Exchange: in.Exchange, MarketType: in.MarketType, Symbol: in.Symbol}
	removed, err := r.Members.Store().RemoveFavorite(ctx, m.ID, k.store())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(FavoriteChange{Changed: removed}), nil
}

func (r *routes) favoriteExists(ctx context.Context, in *favoritePath) (*reply[FavoriteExists], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	k := FavoriteKey{Exchange: in.Exchange, MarketType: in.MarketType, Symbol: in.Symbol}
	exists, err := r.Members.Store().FavoriteExists(ctx, m.ID, k.store())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(FavoriteExists{Exists: exists}), nil
}

func (r *routes) mergeFavorites(ctx context.Context, in *struct{ Body FavoritesMerge }) (*reply[MergeResult], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	favs := make([]store.Favorite, 0, len(in.Body.Favorites))
	for _, k := range in.Body.Favorites {
		favs = append(favs, k.store())
	}
	st := r.Members.Store()
	res, err := st.MergeFavorites(ctx, m.ID, favs)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	list, err := st.ListFavorites(ctx, m.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(MergeResult{Added: res.Added, Present: res.Present, Dropped: res.Dropped, Favorites: favoritesOf(list)}), nil
}
