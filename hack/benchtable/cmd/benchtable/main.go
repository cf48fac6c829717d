// Command benchtable reads `go test -bench` output and prints the one Markdown table of `make bench`, headed by
// the date and the machine it was measured on.
//
//	go test -run '^$' -bench . ./... | benchtable
package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/almproject/alm/hack/benchtable"
)

func main() {
	results, err := benchtable.Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(results) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines in the input")
		os.Exit(1)
	}
	fmt.Printf("Measured %s on %s, %d cores, %s/%s, %s.\n\n", time.Now().UTC().Format("2006-01-02"), cpuModel(),
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	benchtable.Write(os.Stdout, benchtable.Figures, results)
}

// cpuModel is the processor's name from /proc/cpuinfo, or "an unknown CPU".
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "an unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "an unknown CPU"
}
