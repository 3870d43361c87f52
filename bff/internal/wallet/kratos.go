package wallet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// KratosDirectory finds members by e-mail with Kratos' admin API (GET /admin/identities?credentials_identifier=),
// which matches the identity's password identifier (its e-mail trait) exactly.
type KratosDirectory struct {
	// AdminURL is Kratos' admin API, e.g. http://127.0.0.1:4434.
	AdminURL string
	// Client is the HTTP client (nil: one with a 10 s timeout).
	Client *http.Client
}

// MemberIDByEmail returns the identity id of the member with that e-mail address, ErrNoMember when none.
func (k KratosDirectory) MemberIDByEmail(ctx context.Context, email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" || k.AdminURL == "" {
		return "", ErrNoMember
	}
	c := k.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	u := strings.TrimRight(k.AdminURL, "/") + "/admin/identities?credentials_identifier=" + url.QueryEscape(strings.ToLower(email))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("wallet: identity lookup: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("wallet: identity lookup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("wallet: identity lookup: status %d", resp.StatusCode)
	}
	var ids []struct {
		ID     string `json:"id"`
		Traits struct {
			Email string `json:"email"`
		} `json:"traits"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ids); err != nil {
		return "", fmt.Errorf("wallet: identity lookup: %w", err)
	}
	for _, id := range ids {
		if strings.EqualFold(id.Traits.Email, email) && id.ID != "" {
			return id.ID, nil
		}
	}
	return "", ErrNoMember
}
