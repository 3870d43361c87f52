// Package plugintest builds the exchange plugins a test binary runs, once per binary, from this checkout.
//
//	func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "binance", "okx")) }
//
// and then plugintest.Path("binance") in a test. EXHUB_TEST_PLUGIN_DIR names a directory of already built plugins
// (bin/plugins) to use instead; nothing is built then. The built binaries are removed when the tests end, whatever
// their result.
package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvDir names a directory of built plugins to run instead of building them.
const EnvDir = "EXHUB_TEST_PLUGIN_DIR"

var dir string

// Run builds the named plugins (directories under plugins/, or any package path relative to the repository root
// such as "bff/internal/pluginhost/testdata/testplugin", whose binary is named after its last element), runs the
// tests with run (m.Run when nil; storetest.Run for store tests), removes the binaries and returns the exit code.
func Run(m *testing.M, run func(*testing.M) int, names ...string) int {
	if run == nil {
		run = func(m *testing.M) int { return m.Run() }
	}
	if d := os.Getenv(EnvDir); d != "" {
		dir = d
		return run(m)
	}
	d, err := os.MkdirTemp("", "exhub-plugins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "plugintest:", err)
		return 1
	}
	defer os.RemoveAll(d)
	if err := build(d, names); err != nil {
		fmt.Fprintln(os.Stderr, "plugintest:", err)
		return 1
	}
	dir = d
	return run(m)
}

// Path is the binary of a plugin Run built (or found in EXHUB_TEST_PLUGIN_DIR).
func Path(name string) string {
	if dir == "" {
		panic("plugintest: Path before Run (call plugintest.Run from TestMain)")
	}
	return filepath.Join(dir, filepath.Base(name))
}

// Dir is the directory of the plugins Run built.
func Dir() string { return dir }

// build compiles every package in one go command, into d.
func build(d string, names []string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	args := []string{"build", "-o", d + string(filepath.Separator)}
	for _, n := range names {
		if filepath.Base(n) == n {
			n = "plugins/" + n
		}
		args = append(args, "./"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %v: %w", args, err)
	}
	return nil
}

// repoRoot is the module root: three directories above this file.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the repository")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("repository root %s: %w", root, err)
	}
	return root, nil
}
