// Command konnect-simulator serves the Kong Konnect API simulator
// (test/konnectsim) as a standalone process, for `make run` and end-to-end
// tests. Point the Konnect operator (or the SDK) at the printed URL with one
// of the accepted tokens.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/almproject/alm/test/konnectsim"
)

// listFlag collects a repeatable flag whose values may also be comma separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// orgFlag collects "Name=token1,token2" organizations.
type orgFlag []konnectsim.Organization

func (o *orgFlag) String() string { return fmt.Sprint(len(*o), " organizations") }

func (o *orgFlag) Set(v string) error {
	name, tokens, ok := strings.Cut(v, "=")
	if !ok || name == "" || tokens == "" {
		return fmt.Errorf("want NAME=TOKEN[,TOKEN...], got %q", v)
	}
	var l listFlag
	_ = l.Set(tokens)
	*o = append(*o, konnectsim.Organization{Name: name, Tokens: l})
	return nil
}

func main() {
	log.SetFlags(0)
	fs := flag.NewFlagSet("konnect-simulator", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: konnect-simulator [flags]

Serves a simulated Kong Konnect API (organizations/me, control planes and
control plane group memberships, and the services, routes, consumers and
consumer credentials of each control plane) over HTTP on a loopback address,
with bearer-token authentication, rate limiting and fault injection.
Test knobs are also reachable over HTTP under /_simulator (see package
test/konnectsim). Stops on SIGINT or SIGTERM.

Flags:
`)
		fs.PrintDefaults()
	}
	var (
		listen     = fs.String("listen", "127.0.0.1:8443", "loopback `address` to listen on (host:port; port 0 picks a free one)")
		tokens     listFlag
		orgs       orgFlag
		orgName    = fs.String("org-name", "Simulated Organization", "`name` of the organization the --token tokens belong to")
		latency    = fs.Duration("latency", 0, "`duration` added to every request (e.g. 20ms)")
		errorRate  = fs.Float64("error-rate", 0, "`probability` (0..1) that a request fails with 500 before it is handled")
		lostRate   = fs.Float64("lost-response-rate", 0, "`probability` (0..1) that a create/update/delete is committed but answered with 502")
		rateLimit  = fs.Float64("rate-limit", 0, "requests per second allowed per organization; above it 429 with Retry-After (0: unlimited)")
		rateBurst  = fs.Int("rate-limit-burst", 0, "burst size of --rate-limit (0: the rate rounded up)")
		seed       = fs.Uint64("seed", 1, "`seed` for generated ids and random faults")
		conflict   = fs.Int("conflict-status", 400, "HTTP `status` of a core entity unique-name conflict: 400 (as Konnect) or 409")
		logAll     = fs.Bool("log-requests", false, "log every request (method and path)")
		printToken = fs.Bool("print-tokens", true, "print the accepted tokens at start (they are test tokens)")
	)
	fs.Var(&tokens, "token", "accepted bearer `token` (repeatable or comma separated; default "+konnectsim.DefaultToken+")")
	fs.Var(&orgs, "org", "an extra organization `NAME=TOKEN[,TOKEN...]` (repeatable); its tokens see only its objects")
	_ = fs.Parse(os.Args[1:])

	if len(tokens) == 0 {
		tokens = listFlag{konnectsim.DefaultToken}
	}
	if *conflict != 400 && *conflict != 409 {
		log.Fatalf("konnect-simulator: --conflict-status must be 400 or 409")
	}
	opts := konnectsim.Options{
		Organizations:            append([]konnectsim.Organization{{Name: *orgName, Tokens: tokens}}, orgs...),
		Seed:                     *seed,
		Latency:                  *latency,
		RateLimit:                *rateLimit,
		RateLimitBurst:           *rateBurst,
		ErrorRate:                *errorRate,
		LostResponseRate:         *lostRate,
		CoreEntityConflictStatus: *conflict,
	}
	if *logAll {
		opts.Logf = log.Printf
	}
	serve(opts, *listen, *printToken)
}

// serve runs the simulator on listen until SIGINT or SIGTERM, after printing its URL and organizations.
func serve(opts konnectsim.Options, listen string, printTokens bool) {
	// Catch the signals before announcing the URL, so a caller may signal us as soon as it reads it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	sim := konnectsim.New(opts)
	if err := sim.StartOn(listen); err != nil {
		log.Fatalf("konnect-simulator: %v", err)
	}
	fmt.Printf("konnect-simulator listening on %s\n", sim.URL())
	for _, o := range opts.Organizations {
		line := fmt.Sprintf("  organization %s (%s): %d token(s)", sim.OrganizationID(o.Tokens[0]), o.Name, len(o.Tokens))
		if printTokens {
			line += ": " + strings.Join(o.Tokens, ", ")
		}
		fmt.Println(line)
	}

	<-ctx.Done()
	fmt.Println("konnect-simulator: shutting down")
	done := make(chan error, 1)
	go func() { done <- sim.Close() }()
	select {
	case err := <-done:
		if err != nil {
			log.Fatalf("konnect-simulator: %v", err)
		}
	case <-time.After(10 * time.Second):
		log.Fatalf("konnect-simulator: shutdown timed out")
	}
}
