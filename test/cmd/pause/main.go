// Command pause is the local node's pod sandbox image (test/localnode): it holds a pod's namespaces, as Kubernetes'
// pause container does, and exits on SIGTERM or SIGINT. `make images` builds it from this module, since no image is
// downloaded.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Println("usage: pause\n\nHolds a pod's namespaces until SIGTERM or SIGINT (the local node's sandbox image).")
		return
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
