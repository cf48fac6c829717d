// Command chaostable prints the rows the chaos scenarios recorded (make test-chaos) as one Markdown table; with
// -measured it also writes the table into that file's section of the command (hack/measured).
//
//	chaostable -measured docs/measured.md -command 'make test-chaos' bin/chaos-report.jsonl
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/almproject/alm/hack/measured"
	"github.com/almproject/alm/test/chaos"
)

func main() {
	path := flag.String("measured", "", "write the table into this file's section of -command (docs/measured.md)")
	command := flag.String("command", "make test-chaos", "the exact command that measured the figures")
	started := flag.Int64("started", 0, "when the command started, in Unix seconds")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: chaostable [-measured FILE -command CMD -started UNIX] <report.jsonl>")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(1)
	}
	defer f.Close()
	var table bytes.Buffer
	if err := chaos.WriteTable(&table, f); err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(1)
	}
	fmt.Print(table.String())
	if *path == "" {
		return
	}
	h := measured.Header{Command: *command}
	if *started > 0 {
		h.Started = time.Unix(*started, 0)
	}
	if err := measured.Update(*path, "chaos", h, table.String()); err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(1)
	}
	fmt.Printf("\n(written to %s)\n", *path)
}
