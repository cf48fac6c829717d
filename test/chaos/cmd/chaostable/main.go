// Command chaostable prints the rows the chaos scenarios recorded (make test-chaos) as one Markdown table.
//
//	chaostable bin/chaos-report.jsonl
package main

import (
	"fmt"
	"os"

	"github.com/almproject/alm/test/chaos"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: chaostable <report.jsonl>")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(1)
	}
	defer f.Close()
	if err := chaos.WriteTable(os.Stdout, f); err != nil {
		fmt.Fprintln(os.Stderr, "chaostable:", err)
		os.Exit(1)
	}
}
