package chserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// ConfigFile is the server configuration written into the data directory at every start: it names UsersFile.
func (c Config) ConfigFile() string { return filepath.Join(c.Path, "exhub-config.xml") }

// UsersFile is the users configuration written into the data directory at every start: the password-less "default"
// user (loopback clients only, full access: the BFF's user) and the read-only analyst user.
func (c Config) UsersFile() string { return filepath.Join(c.Path, "exhub-users.xml") }

// writeAccessConfig writes ConfigFile and UsersFile (mode 0600; the password is stored as its SHA-256 only).
func writeAccessConfig(c Config) error {
	sum := sha256.Sum256([]byte(c.AnalystPassword))
	users := fmt.Sprintf(`<clickhouse>
    <profiles>
        <default></default>
        <readonly>
            <readonly>2</readonly>
            <constraints>
                <readonly>
                    <const/>
                </readonly>
                <allow_ddl>
                    <const/>
                </allow_ddl>
            </constraints>
            <allow_ddl>0</allow_ddl>
        </readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.0/8</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
            <named_collection_control>1</named_collection_control>
        </default>
        <%[1]s>
            <password_sha256_hex>%[2]s</password_sha256_hex>
            <networks>
                <ip>127.0.0.0/8</ip>
                <ip>::1</ip>
            </networks>
            <profile>readonly</profile>
            <quota>default</quota>
            <grants>
                <query>GRANT SELECT ON %[3]s.*</query>
            </grants>
        </%[1]s>
    </users>
    <quotas>
        <default></default>
    </quotas>
</clickhouse>
`, c.AnalystUser, hex.EncodeToString(sum[:]), c.AnalystDatabase)
	var path strings.Builder
	if err := xml.EscapeText(&path, []byte(c.UsersFile())); err != nil {
		return fmt.Errorf("clickhouse: users file path: %w", err)
	}
	conf := fmt.Sprintf("<clickhouse>\n    <users_config>%s</users_config>\n</clickhouse>\n", path.String())
	for _, f := range []struct{ path, body string }{{c.UsersFile(), users}, {c.ConfigFile(), conf}} {
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			return fmt.Errorf("clickhouse: write %s: %w", f.path, err)
		}
	}
	return nil
}
