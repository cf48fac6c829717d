// Command localenv runs ALM's local environment (`make run`): a real control plane (etcd, kube-apiserver and
// kube-controller-manager with the garbage collector) with ALM's CRDs installed. It stays in the foreground and
// tears everything down on Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/almproject/alm/test/controlplane"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "localenv: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	stateDir := flag.String("state-dir", filepath.Join(root, ".localenv"),
		"Directory for the kubeconfig and the control plane logs; kept after exit for inspection.")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "localenv starts ALM's local environment and stays in the foreground; Ctrl-C stops it.\n\nUsage: localenv [flags]\n\nFlags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := os.MkdirAll(*stateDir, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(*stateDir, "controlplane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()

	fmt.Println("Starting the local control plane (etcd, kube-apiserver, kube-controller-manager)...")
	cp, err := controlplane.Start(controlplane.Options{
		CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")},
		Output:            logFile,
	})
	if err != nil {
		return fmt.Errorf("%w (control plane logs: %s)", err, logPath)
	}
	defer func() {
		fmt.Println("Stopping the local control plane...")
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "localenv: stopping: %v\n", err)
		}
	}()
	kubeconfig := filepath.Join(*stateDir, "kubeconfig")
	data, err := os.ReadFile(cp.KubeconfigPath)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return err
	}
	kubectl := filepath.Join(root, "bin", "kubectl")
	fmt.Printf(`
The local control plane is up.

  kubeconfig:  %[1]s
  logs:        %[2]s

Try:
  %[3]s --kubeconfig %[1]s get crd
  export KUBECONFIG=%[1]s

Press Ctrl-C to stop and remove everything.
`, kubeconfig, logPath, kubectl)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	return nil
}
