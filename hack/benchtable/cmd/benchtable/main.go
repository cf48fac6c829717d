// Command benchtable reads `go test -bench` output and prints the one Markdown table of `make bench`, headed by
// the date, the commit and the machine it was measured on; with -measured it also writes the table into that file's
// section of the command (hack/measured).
//
//	go test -run '^$' -bench . ./... | benchtable -measured docs/measured.md -command 'make bench'
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/almproject/alm/hack/benchtable"
	"github.com/almproject/alm/hack/measured"
)

func main() {
	path := flag.String("measured", "", "write the table into this file's section of -command (docs/measured.md)")
	command := flag.String("command", "make bench", "the exact command that measured the figures")
	started := flag.Int64("started", 0, "when the command started, in Unix seconds")
	flag.Parse()
	results, err := benchtable.Parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(results) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines in the input")
		os.Exit(1)
	}
	var table bytes.Buffer
	benchtable.Write(&table, benchtable.Figures, results)
	fmt.Printf("Measured %s at commit %s on %s.\n\n%s", time.Now().UTC().Format("2006-01-02"), measured.Commit(), measured.Machine(), table.String())
	if *path == "" {
		return
	}
	h := measured.Header{Command: *command}
	if *started > 0 {
		h.Started = time.Unix(*started, 0)
	}
	if err := measured.Update(*path, "bench", h, table.String()); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	fmt.Printf("\n(written to %s)\n", *path)
}
