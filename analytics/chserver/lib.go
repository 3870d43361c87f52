package chserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/ebitengine/purego"
)

// LibRelPath is where `npm ci` in analytics/clickhouse puts the ClickHouse engine library, relative to the
// repository root.
const LibRelPath = "analytics/clickhouse/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so"

// InstallHint is the command that installs the library; error messages name it.
const InstallHint = "run `make deps` (or analytics/clickhouse/install.sh)"

// ErrLibMissing reports that the ClickHouse engine library is not installed.
var ErrLibMissing = errors.New("ClickHouse library libchdb.so not found")

// LibEnv overrides the library location.
const LibEnv = "EXHUB_CLICKHOUSE_LIB"

// FindLib returns the path of libchdb.so: $EXHUB_CLICKHOUSE_LIB when set, else the first LibRelPath found walking up
// from the working directory and then from the running executable's directory (so bin/exhub-clickhouse finds the
// library of its own checkout wherever it is started from).
func FindLib() (string, error) {
	if p := os.Getenv(LibEnv); p != "" {
		if err := CheckLib(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", LibEnv, p, err)
		}
		return p, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		if p, ok := findUp(dir, LibRelPath); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w under %s (searched up from %v): %s", ErrLibMissing, LibRelPath, starts, InstallHint)
}

// CheckLib reports whether path names a readable regular file.
func CheckLib(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w at %s: %s", ErrLibMissing, path, InstallHint)
		}
		return fmt.Errorf("ClickHouse library %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("ClickHouse library %s is not a regular file", path)
	}
	return nil
}

func findUp(dir, rel string) (string, bool) {
	for {
		p := filepath.Join(dir, rel)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// engine is the loaded library: the few exported functions the server needs.
type engine struct {
	// queryCmdline runs clickhouse-local with a command line and returns a chdb_result pointer.
	queryCmdline func(argc int32, argv **byte) uintptr
	resultError  func(res uintptr) string
	destroy      func(res uintptr)
}

var (
	loadMu  sync.Mutex
	loaded  = map[string]*engine{}
	loadErr = map[string]error{}
)

// loadEngine opens the library once per process; later calls return the same engine.
func loadEngine(path string) (*engine, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("the local ClickHouse server needs linux/amd64 (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if e, ok := loaded[path]; ok {
		return e, nil
	}
	if err, ok := loadErr[path]; ok {
		return nil, err
	}
	e, err := openEngine(path)
	if err != nil {
		loadErr[path] = err
		return nil, err
	}
	loaded[path] = e
	return e, nil
}

func openEngine(path string) (e *engine, err error) {
	if err := CheckLib(path); err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("load ClickHouse library %s: %w", path, err)
	}
	// RegisterLibFunc panics when a symbol is missing: turn that into an error naming the library.
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("ClickHouse library %s lacks an expected symbol (wrong version? %s): %v", path, InstallHint, r)
		}
	}()
	e = &engine{}
	purego.RegisterLibFunc(&e.queryCmdline, h, "chdb_query_cmdline")
	purego.RegisterLibFunc(&e.resultError, h, "chdb_result_error")
	purego.RegisterLibFunc(&e.destroy, h, "chdb_destroy_query_result")
	return e, nil
}

// runCmdline calls chdb_query_cmdline with args (args[0] is the program name) and blocks until it returns. The
// returned string is the engine's error message, empty on success.
func (e *engine) runCmdline(args []string) string {
	bufs := make([][]byte, len(args))
	argv := make([]*byte, len(args)+1)
	for i, a := range args {
		bufs[i] = append([]byte(a), 0)
		argv[i] = &bufs[i][0]
	}
	res := e.queryCmdline(int32(len(args)), &argv[0])
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(argv)
	if res == 0 {
		return "engine returned no result"
	}
	msg := e.resultError(res)
	e.destroy(res)
	return msg
}
