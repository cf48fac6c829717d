// Package speccheck checks HTTP requests and answers against Kong's published contract for Konnect: the OpenAPI
// document (openapi.yaml) at the root of the github.com/Kong/sdk-konnect-go module the operator is built with, the
// document Kong generates that SDK from. It is read from the module as `go mod download` put it on the machine; no
// copy is checked in.
//
// The document is loaded once per process, on first use (about 0.3 s, see Stats), then adjusted where it cannot be
// used as it is (adjust.go: each adjustment says why). Check validates one exchange (a request and its answer) with
// kin-openapi's openapi3filter and returns its violations, each naming the operation, the field and the rule, and
// whether the request (the client: an operator bug) or the answer (the server: a simulator bug) broke it.
package speccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// SDKModule is the Go module whose openapi.yaml is the contract.
const SDKModule = "github.com/Kong/sdk-konnect-go"

// Spec is the adjusted document and a router over its operations.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
	// Version is the SDK module's version (the one in go.mod), Path the document's file.
	Version, Path string
	// LoadTime is how long finding, parsing and adjusting the document took.
	LoadTime time.Duration
}

var (
	loadOnce sync.Once
	loaded   *Spec
	loadErr  error
)

// Load returns the document of the SDK module, loading it on the first call of the process.
func Load() (*Spec, error) {
	loadOnce.Do(func() {
		start := time.Now()
		loaded, loadErr = load()
		if loaded != nil {
			loaded.LoadTime = time.Since(start)
			loadTime.Store(int64(loaded.LoadTime))
		}
	})
	return loaded, loadErr
}

func load(skip ...string) (*Spec, error) {
	path, version, err := documentPath()
	if err != nil {
		return nil, err
	}
	doc, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	if err := adjust(doc, skip...); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("speccheck: routing %s: %w", path, err)
	}
	return &Spec{doc: doc, router: router, Version: version, Path: path}, nil
}

// loadFile parses the document as Kong wrote it.
func loadFile(path string) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("speccheck: loading %s: %w", path, err)
	}
	return doc, nil
}

// documentPath finds openapi.yaml in the SDK module of go.mod (`go list -m`, run in the current directory, which
// must be inside this repository, as it is for every test and for `go run`). When the running binary was built with
// the SDK, its version must be the one go.mod names: the contract checked is the one of the SDK in use.
func documentPath() (path, version string, err error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-json", SDKModule)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("speccheck: go list -m %s: %w: %s", SDKModule, err, stderr.String())
	}
	var mod struct{ Dir, Version string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", "", fmt.Errorf("speccheck: go list -m %s: %w", SDKModule, err)
	}
	if mod.Dir == "" {
		return "", "", fmt.Errorf("speccheck: module %s@%s is not downloaded (run go mod download)", SDKModule, mod.Version)
	}
	if built := builtVersion(); built != "" && built != mod.Version {
		return "", "", fmt.Errorf("speccheck: this binary has %s %s but go.mod names %s", SDKModule, built, mod.Version)
	}
	path = filepath.Join(mod.Dir, "openapi.yaml")
	if _, err := os.Stat(path); err != nil {
		return "", "", fmt.Errorf("speccheck: %w", err)
	}
	return path, mod.Version, nil
}

// builtVersion is the SDK module's version linked into this binary, "" when unknown.
func builtVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range info.Deps {
		if m.Path == SDKModule {
			if m.Replace != nil {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return ""
}

// errNoOperation is a request for no operation of the document.
var errNoOperation = errors.New("no operation of the document has this method and path")
