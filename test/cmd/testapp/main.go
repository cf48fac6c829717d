// Command testapp is the tests' operator container (test/testapp builds it as an image): it prints its
// environment, serves /healthz and /readyz on --listen (failing with --unhealthy; /readyz failing from
// --unready-after on), and with --exit-code exits with that code after --exit-after.
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
	unreadyAfter := flag.Duration("unready-after", 0, "answer /readyz with 503 from this long after the start on (0: never)")
	flag.Parse()
	start := time.Now()
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
	http.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if *unreadyAfter > 0 && time.Since(start) >= *unreadyAfter {
			http.Error(w, fmt.Sprintf("not ready: stopped being ready %s after the start", *unreadyAfter), http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	fmt.Println("listening on " + *listen)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Println("serving:", err)
		os.Exit(1)
	}
}
