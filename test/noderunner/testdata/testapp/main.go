// Command testapp is the node runner tests' container: it prints its environment, serves /healthz and /readyz on
// --listen (failing with --unhealthy), and with --exit-code exits with that code after --exit-after.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"time"
)

func main() {
	listen := flag.String("listen", "", "address to serve /healthz and /readyz on")
	_ = flag.String("name", "", "a name, printed with the args")
	unhealthy := flag.Bool("unhealthy", false, "answer /healthz and /readyz with 500")
	exitCode := flag.Int("exit-code", -1, "exit with this code after --exit-after")
	exitAfter := flag.Duration("exit-after", 0, "when to exit with --exit-code")
	flag.Parse()
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		fmt.Println("ENV " + kv)
	}
	fmt.Printf("ARGS %q\n", os.Args)
	if *exitCode >= 0 {
		time.Sleep(*exitAfter)
		fmt.Printf("exiting with code %d\n", *exitCode)
		os.Exit(*exitCode)
	}
	if *listen == "" {
		select {}
	}
	ok := func(w http.ResponseWriter, _ *http.Request) {
		if *unhealthy {
			http.Error(w, "unhealthy", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
	http.HandleFunc("/healthz", ok)
	http.HandleFunc("/readyz", ok)
	fmt.Println("listening on " + *listen)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Println("serving:", err)
		os.Exit(1)
	}
}
