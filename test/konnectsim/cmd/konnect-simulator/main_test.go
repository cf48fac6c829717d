package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary runs main() when this variable is set, so the real process
// (flags, start-up line, signal handling) is exercised without a go build.
const runMainEnv = "KONNECT_SIMULATOR_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestProcessServesAndStopsOnSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "--listen", "127.0.0.1:0", "--token", "kpat_one,kpat_two", "--org", "Other=spat_x")
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()

			first, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the start-up line: %v", err)
			}
			url, ok := strings.CutPrefix(strings.TrimSpace(first), "konnect-simulator listening on ")
			if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("start-up line %q", first)
			}
			for token, want := range map[string]int{"kpat_two": 200, "spat_x": 200, "kpat_nope": 401} {
				req, _ := http.NewRequest("GET", url+"/v2/control-planes", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != want {
					t.Errorf("token %s: status %d, want %d", token, res.StatusCode, want)
				}
			}

			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("did not stop")
			}
		})
	}
}

func TestRefusesNonLoopbackListen(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a loopback address") {
		t.Fatalf("err=%v output=%s", err, out)
	}
}
