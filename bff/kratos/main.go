// Command kratos is exhub's build of Ory Kratos, the identity server.
//
// Kratos v1.3.1 cannot be installed with `go install` because its go.mod carries
// replace directives. This wrapper module repeats those directives and calls
// Kratos' own command tree, so `go build` produces the same server.
package main

import (
	"os"
	"runtime/debug"

	"github.com/ory/kratos/cmd"
	"github.com/ory/kratos/driver/config"
)

const kratosModule = "github.com/ory/kratos"

func main() {
	// Kratos stamps its version with linker flags in its own release builds;
	// here the version comes from the module graph instead.
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == kratosModule {
				config.Version = dep.Version
			}
		}
	}
	os.Exit(cmd.Execute())
}
