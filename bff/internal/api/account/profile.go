package account

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/auth"
)

// ProfileUpdate changes the member's nickname and/or locale; absent fields stay as they are.
type ProfileUpdate struct {
	Nickname *string `json:"nickname,omitempty" minLength:"1" maxLength:"32" doc:"1 to 32 characters, no surrounding spaces"`
	Locale   *string `json:"locale,omitempty" minLength:"2" maxLength:"16" pattern:"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$" doc:"A BCP 47 language tag such as en or ja"`
}

func (r *routes) registerProfile(api huma.API) {
	huma.Register(api, r.op("get-profile", http.MethodGet, "/api/v1/me/profile", "The member's profile",
		"The same document as GET /api/v1/me (without setting the CSRF cookie)."), r.getProfile)
	huma.Register(api, r.op("update-profile", http.MethodPatch, "/api/v1/me/profile", "Change nickname or locale",
		"Sets the nickname (1 to 32 characters) and/or the locale; answers the updated profile. 422 when a field "+
			"is invalid.", http.StatusUnprocessableEntity), r.patchProfile)
}

func (r *routes) profile(ctx context.Context, m *auth.Member) (Me, error) {
	row, err := r.Members.Store().Member(ctx, m.ID)
	if err != nil {
		return Me{}, r.fail(ctx, err)
	}
	state, err := r.kycState(ctx, m.ID)
	if err != nil {
		return Me{}, r.fail(ctx, err)
	}
	return enrich(MeOf(m), row, state, r.Members.Now()), nil
}

func (r *routes) getProfile(ctx context.Context, _ *struct{}) (*reply[Me], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	me, err := r.profile(ctx, m)
	if err != nil {
		return nil, err
	}
	return ok(me), nil
}

func (r *routes) patchProfile(ctx context.Context, in *struct{ Body ProfileUpdate }) (*reply[Me], error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	st := r.Members.Store()
	if in.Body.Nickname != nil {
		if err := st.UpdateNickname(ctx, m.ID, *in.Body.Nickname); err != nil {
			return nil, r.fail(ctx, err)
		}
	}
	if in.Body.Locale != nil {
		if err := st.SetLocale(ctx, m.ID, *in.Body.Locale); err != nil {
			return nil, r.fail(ctx, err)
		}
	}
	me, err := r.profile(ctx, m)
	if err != nil {
		return nil, err
	}
	return ok(me), nil
}
