package noderunner

import (
	"reflect"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestRewritePorts(t *testing.T) {
	ports := map[int32]int32{8080: 40001, 8081: 40002}
	for in, want := range map[string]string{
		":8080":                        "127.0.0.1:40001",
		"--metrics-bind-address=:8080": "--metrics-bind-address=127.0.0.1:40001",
		"--health-probe-bind-address=0.0.0.0:8081": "--health-probe-bind-address=127.0.0.1:40002",
		"--addr=localhost:8081":                    "--addr=127.0.0.1:40002",
		"--addr=[::]:8080":                         "--addr=127.0.0.1:40001",
		"--a=:8080,:8081":                          "--a=127.0.0.1:40001,127.0.0.1:40002",
		"--upstream=http://svc:8080":               "--upstream=http://svc:8080",
		"--addr=:80801":                            "--addr=:80801",
		"--addr=:9090":                             "--addr=:9090",
		"8080":                                     "8080",
	} {
		if got := rewritePorts(in, ports); got != want {
			t.Errorf("rewritePorts(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for in, want := range map[string]string{
		"$(A)-$(B)": "x-y", "$$(A)": "$(A)", "$(C)": "$(C)", "a$": "a$", "$(A": "$(A", "$A": "$A", "$$": "$",
	} {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	cfg := v1.Config{Entrypoint: []string{"/ep"}, Cmd: []string{"--cmd"}}
	for _, tc := range []struct {
		command, args, want []string
	}{
		{nil, nil, []string{"/ep", "--cmd"}},
		{nil, []string{"--arg"}, []string{"/ep", "--arg"}},
		{[]string{"/other"}, nil, []string{"/other"}},
		{[]string{"/other"}, []string{"--arg"}, []string{"/other", "--arg"}},
	} {
		got := commandLine(cfg, &corev1.Container{Command: tc.command, Args: tc.args})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("command %v args %v: got %v, want %v", tc.command, tc.args, got, tc.want)
		}
	}
}

func TestContainerEnvOrderAndDownwardAPI(t *testing.T) {
	c := &corev1.Container{Env: []corev1.EnvVar{
		{Name: "OVERRIDE", Value: "container"},
		{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "REF", Value: "$(NS)/$(OVERRIDE)"},
	}}
	env, err := containerEnv(v1.Config{Env: []string{"OVERRIDE=image", "PATH=/bin"}}, c, podInfo{Namespace: "ns1"}, nil,
		map[string]string{"KUBECONFIG": "/k"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"OVERRIDE=container", "PATH=/bin", "NS=ns1", "REF=ns1/container", "KUBECONFIG=/k"}
	if got := env.environ(); !reflect.DeepEqual(got, want) {
		t.Errorf("env = %v, want %v", got, want)
	}
}
