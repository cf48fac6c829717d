package main

import (
	"errors"
	"flag"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configurationv1alpha1 "github.com/almproject/alm/apis/configuration/v1alpha1"
)

func TestSummarizeListsServicesSorted(t *testing.T) {
	svc := func(name, host string, port int64, programmed metav1.ConditionStatus) configurationv1alpha1.KongService {
		s := configurationv1alpha1.KongService{ObjectMeta: metav1.ObjectMeta{Name: name}}
		s.Spec.Host, s.Spec.Port = host, port
		if programmed != "" {
			s.Status.Conditions = []metav1.Condition{{Type: "Programmed", Status: programmed}}
		}
		return s
	}
	got := summarize([]configurationv1alpha1.KongService{
		svc("web", "web.svc", 8080, metav1.ConditionTrue), svc("api", "api.svc", 0, ""),
	})
	want := "api api.svc:80 programmed=Unknown\nweb web.svc:8080 programmed=True\n"
	if got["services"] != want || got["count"] != "2" {
		t.Errorf("summary = %q, want services %q and count 2", got, want)
	}
	if empty := summarize(nil); empty["services"] != "" || empty["count"] != "0" {
		t.Errorf("empty summary = %q", empty)
	}
}

func TestFlags(t *testing.T) {
	if _, err := parseFlags([]string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: err = %v, want flag.ErrHelp", err)
	}
	t.Setenv("POD_NAMESPACE", "")
	if _, err := parseFlags(nil); err == nil || !strings.Contains(err.Error(), "--watch-namespace") {
		t.Errorf("no namespace: err = %v, want one naming --watch-namespace", err)
	}
	t.Setenv("POD_NAMESPACE", "team-a")
	o, err := parseFlags(nil)
	if err != nil || o.namespace != "team-a" || o.probeAddr != ":8091" {
		t.Errorf("defaults: %+v, %v", o, err)
	}
}
