package query

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/schema"
)

// docs/analytics.md documents every column, and its example SQL runs against the real schema.
func TestAnalystDocs(t *testing.T) {
	raw, err := os.ReadFile("../../docs/analytics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, tb := range schema.Tables {
		i := strings.Index(doc, "### `"+tb.Name+"`")
		if i < 0 {
			t.Errorf("docs/analytics.md has no section for %s", tb.Name)
			continue
		}
		section := doc[i:]
		if j := strings.Index(section[4:], "\n### "); j >= 0 {
			section = section[:j+4]
		}
		for _, c := range tb.Columns {
			if !strings.Contains(section, "| `"+c.Name+"` | `"+c.Type+"` | "+c.Doc+" |") {
				t.Errorf("docs/analytics.md: %s.%s is missing or out of date", tb.Name, c.Name)
			}
		}
	}
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "exhub"}, nil); err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(doc, -1)
	ran := 0
	for _, b := range blocks {
		sql := strings.TrimSpace(b[1])
		if strings.Contains(sql, "CREATE USER") || strings.Contains(sql, "$__") {
			continue // production-only statements and Grafana macros
		}
		rows, err := srv.Conn.Query(ctx, strings.TrimSuffix(sql, ";"))
		if err != nil {
			t.Errorf("example SQL fails: %v\n%s", err, sql)
			continue
		}
		rows.Close()
		ran++
	}
	if ran < 5 {
		t.Fatalf("ran %d example queries, want at least 5", ran)
	}
}
