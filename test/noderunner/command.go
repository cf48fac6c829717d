package noderunner

import (
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
)

// podIP is the address every local pod has: all processes run on the host's loopback.
const podIP = "127.0.0.1"

// nodeName is the node every local pod runs on.
const nodeName = "alm-local-node"

// podInfo is what the downward API exposes of a local pod.
type podInfo struct {
	Namespace      string
	Name           string
	UID            string
	ServiceAccount string
	Labels         map[string]string
	Annotations    map[string]string
}

// fieldValue answers a downward-API fieldRef of the pod.
func (p podInfo) fieldValue(path string) (string, error) {
	switch path {
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.name":
		return p.Name, nil
	case "metadata.uid":
		return p.UID, nil
	case "spec.serviceAccountName":
		return p.ServiceAccount, nil
	case "spec.nodeName":
		return nodeName, nil
	case "status.podIP", "status.hostIP":
		return podIP, nil
	case "status.podIPs", "status.hostIPs":
		return podIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": p.Labels, "metadata.annotations": p.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// commandLine is Kubernetes' rule: command replaces the image's Entrypoint (and drops its Cmd), args replaces Cmd.
func commandLine(cfg v1.Config, c *corev1.Container) []string {
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = append(append(argv, c.Command...), c.Args...)
	case len(c.Args) > 0:
		argv = append(append(argv, cfg.Entrypoint...), c.Args...)
	default:
		argv = append(append(argv, cfg.Entrypoint...), cfg.Cmd...)
	}
	return argv
}

// expand replaces $(VAR) with the value of VAR as Kubernetes does: "$$" is a literal "$", and a reference to an
// undefined variable is left as written.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := lookup(name); ok {
					b.WriteString(v)
				} else {
					b.WriteString(s[i : i+3+end])
				}
				i += 2 + end
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// envList is an ordered environment where a later definition replaces an earlier one.
type envList struct {
	names  []string
	values map[string]string
}

func newEnvList() *envList { return &envList{values: map[string]string{}} }

func (e *envList) set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envList) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// environ returns NAME=value lines in definition order.
func (e *envList) environ() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.values[n])
	}
	return out
}

// lookupFunc reads the data of a ConfigMap or Secret (kind) named name in the pod's namespace.
type lookupFunc func(kind, name string) (map[string]string, error)

// containerEnv is the process environment: the image's Env, then envFrom, then env (each later one wins, values
// expanded with $(VAR) from what is defined before), then extra (the runner's own, e.g. KUBECONFIG).
func containerEnv(cfg v1.Config, c *corev1.Container, pod podInfo, lookup lookupFunc, extra map[string]string) (*envList, error) {
	env := newEnvList()
	for _, kv := range cfg.Env {
		name, value, _ := strings.Cut(kv, "=")
		env.set(name, value)
	}
	for _, from := range c.EnvFrom {
		if err := setEnvFrom(env, from, lookup); err != nil {
			return nil, err
		}
	}
	for _, ev := range c.Env {
		value, ok, err := envValue(ev, pod, lookup)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", ev.Name, err)
		}
		if ok {
			env.set(ev.Name, expand(value, env.lookup))
		}
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		env.set(n, extra[n])
	}
	return env, nil
}

func setEnvFrom(env *envList, from corev1.EnvFromSource, lookup lookupFunc) error {
	kind, name, optional := "ConfigMap", "", false
	switch {
	case from.ConfigMapRef != nil:
		name, optional = from.ConfigMapRef.Name, ptrTrue(from.ConfigMapRef.Optional)
	case from.SecretRef != nil:
		kind, name, optional = "Secret", from.SecretRef.Name, ptrTrue(from.SecretRef.Optional)
	default:
		return nil
	}
	data, err := lookup(kind, name)
	if err != nil {
		if optional {
			return nil
		}
		return fmt.Errorf("envFrom %s %s: %w", kind, name, err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env.set(from.Prefix+k, data[k])
	}
	return nil
}

// envValue is one env entry's value; ok is false for an optional reference that is missing.
func envValue(ev corev1.EnvVar, pod podInfo, lookup lookupFunc) (value string, ok bool, err error) {
	src := ev.ValueFrom
	switch {
	case src == nil:
		return ev.Value, true, nil
	case src.FieldRef != nil:
		v, err := pod.fieldValue(src.FieldRef.FieldPath)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		return keyValue(lookup, "ConfigMap", src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key, ptrTrue(src.ConfigMapKeyRef.Optional))
	case src.SecretKeyRef != nil:
		return keyValue(lookup, "Secret", src.SecretKeyRef.Name, src.SecretKeyRef.Key, ptrTrue(src.SecretKeyRef.Optional))
	}
	return "", false, nil // resourceFieldRef and the like: not supported locally
}

func keyValue(lookup lookupFunc, kind, name, key string, optional bool) (string, bool, error) {
	data, err := lookup(kind, name)
	if err != nil {
		if optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s %s: %w", kind, name, err)
	}
	v, ok := data[key]
	if !ok && !optional {
		return "", false, fmt.Errorf("%s %s has no key %q", kind, name, key)
	}
	return v, ok, nil
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// listenAddr matches a listen address in an argument or env value: ":PORT", "0.0.0.0:PORT", "127.0.0.1:PORT",
// "localhost:PORT" or "[::]:PORT", at the start of the value or after "=", "," or white space. A URL's host:port
// ("http://svc:8080") does not match.
var listenAddr = regexp.MustCompile(`(^|[=,\s])(0\.0\.0\.0|127\.0\.0\.1|localhost|\[::\])?:(\d+)`)

// rewritePorts maps every listen address on a declared containerPort to the pod's loopback host port: this is how
// several local pods that all bind e.g. :8080 and :8081 run side by side. Ports not in ports are left alone.
func rewritePorts(s string, ports map[int32]int32) string {
	return listenAddr.ReplaceAllStringFunc(s, func(m string) string {
		sub := listenAddr.FindStringSubmatch(m)
		port, err := strconv.ParseInt(sub[3], 10, 32)
		if err != nil {
			return m
		}
		host, ok := ports[int32(port)]
		if !ok {
			return m
		}
		return sub[1] + net.JoinHostPort(podIP, strconv.Itoa(int(host)))
	})
}
