package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	almv1alpha1 "github.com/almproject/alm/apis/operators/v1alpha1"
)

// The views of `almctl status`: pure functions of a clusterState.

// maxWhy bounds the WHY column; `almctl status APPTYPE` shows every message whole.
const maxWhy = 110

// maxEvents is how many recent events the detail view shows.
const maxEvents = 10

// writeSummary writes one line per AppType: installed version, phase, catalog, upgrade offered and why.
func writeSummary(w io.Writer, st *clusterState, allNamespaces bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	header := "APPTYPE\tPACKAGE\tINSTALLED\tPHASE\tCATALOG\tUPGRADE\tWHY"
	if allNamespaces {
		header = "NAMESPACE\t" + header
	}
	fmt.Fprintln(tw, header)
	ats := append([]almv1alpha1.AppType(nil), st.appTypes...)
	sort.Slice(ats, func(i, j int) bool {
		return ats[i].Namespace+"/"+ats[i].Name < ats[j].Namespace+"/"+ats[j].Name
	})
	for i := range ats {
		at := &ats[i]
		ov := st.installed(at)
		cols := []string{at.Name, at.Spec.Package, dash(at.Status.InstalledVersion), dash(string(phaseOf(ov))), st.catalogColumn(ov),
			dash(at.Status.AvailableUpgrade), oneLine(why(at, ov), maxWhy)}
		if allNamespaces {
			cols = append([]string{at.Namespace}, cols...)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	_ = tw.Flush()
	if len(ats) == 0 {
		fmt.Fprintln(w, "no AppTypes")
	}
	writeRollouts(w, st)
}

// installed is the OperatorVersion the AppType reports installed; before any version of it has Succeeded, the
// newest of its package in its namespace (the one being installed, and the one to say why not); nil if none.
func (st *clusterState) installed(at *almv1alpha1.AppType) *almv1alpha1.OperatorVersion {
	if at.Status.InstalledOperatorVersion == "" {
		if vs := st.versionsOf(at); len(vs) > 0 {
			return vs[len(vs)-1]
		}
		return nil
	}
	for i := range st.versions {
		ov := &st.versions[i]
		if ov.Namespace == at.Namespace && ov.Name == at.Status.InstalledOperatorVersion {
			return ov
		}
	}
	return nil
}

// versionsOf are the OperatorVersions of the AppType's package in its namespace, oldest first.
func (st *clusterState) versionsOf(at *almv1alpha1.AppType) []*almv1alpha1.OperatorVersion {
	var out []*almv1alpha1.OperatorVersion
	for i := range st.versions {
		ov := &st.versions[i]
		if ov.Namespace == at.Namespace && ov.Spec.PackageName == at.Spec.Package {
			out = append(out, ov)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

func phaseOf(ov *almv1alpha1.OperatorVersion) almv1alpha1.OperatorVersionPhase {
	if ov == nil {
		return ""
	}
	return ov.Status.Phase
}

// catalogColumn names the CatalogSource the version came from, marked when it is not Ready.
func (st *clusterState) catalogColumn(ov *almv1alpha1.OperatorVersion) string {
	if ov == nil || ov.Spec.Source == nil {
		return "-"
	}
	key := ov.Spec.Source.Namespace + "/" + ov.Spec.Source.Name
	cs := st.catalogs[key]
	switch {
	case cs == nil:
		return key + " (not found)"
	case !apimeta.IsStatusConditionTrue(cs.Status.Conditions, almv1alpha1.ConditionReady):
		return key + " (not ready)"
	}
	return key
}

// why is the one thing to know about an AppType, as "Reason: message": the installed version's state while it is
// not Succeeded; else an upgrade waiting (for approval, or to be installed); else a resolution problem; else Ready.
func why(at *almv1alpha1.AppType, ov *almv1alpha1.OperatorVersion) string {
	if ov != nil && ov.Status.Phase != almv1alpha1.PhaseSucceeded {
		if ov.Status.Reason != "" || ov.Status.Message != "" {
			return ov.Status.Reason + ": " + ov.Status.Message
		}
		return "waiting for ALM to install " + ov.Name
	}
	if h := haltOf(at); h != "" {
		return h
	}
	for _, t := range []string{almv1alpha1.ConditionUpgradeAvailable, almv1alpha1.ConditionResolved, almv1alpha1.ConditionReady} {
		c := apimeta.FindStatusCondition(at.Status.Conditions, t)
		switch {
		case c == nil:
		case t == almv1alpha1.ConditionUpgradeAvailable && c.Status == metav1.ConditionTrue,
			t == almv1alpha1.ConditionResolved && c.Status == metav1.ConditionFalse,
			t == almv1alpha1.ConditionReady:
			return c.Reason + ": " + c.Message
		}
	}
	return "not resolved yet"
}

// writeDetail writes everything `almctl status APPTYPE` shows about the one AppType in st.
func writeDetail(w io.Writer, st *clusterState) error {
	at := &st.appTypes[0]
	ov := st.installed(at)
	fmt.Fprintf(w, "AppType %s/%s: package %s, channel %s, approval %s%s\n", at.Namespace, at.Name, at.Spec.Package,
		orDefault(at.Spec.Channel, "(the package's default)"), orDefault(string(at.Spec.Approval), string(almv1alpha1.ApprovalAutomatic)), rangeOf(at))
	if ov != nil {
		fmt.Fprintf(w, "Installed: %s (%s), phase %s: %s\n", ov.Name, ov.Spec.Version.String(), dash(string(ov.Status.Phase)), dash(ov.Status.Message))
	} else {
		fmt.Fprintln(w, "Installed: nothing")
	}
	fmt.Fprintf(w, "Upgrade:   %s\n", orDefault(at.Status.AvailableUpgrade, "none offered"))
	if p := at.Status.UpgradePreview; p != nil {
		fmt.Fprintf(w, "Preview:   %s (almctl upgrade preview %s -n %s lists the changes)\n", p.Summary, at.Name, at.Namespace)
	}
	for _, key := range st.catalogKeys() {
		fmt.Fprintf(w, "Catalog:   %s\n", catalogLine(key, st.catalogs[key], st.now))
	}
	writeRollouts(w, st)
	writeResolution(w, at)
	writeConditions(w, st, at)
	if ov != nil {
		writeOwned(w, ov)
	}
	writeEvents(w, st, at)
	return nil
}

func (st *clusterState) catalogKeys() []string {
	keys := make([]string, 0, len(st.catalogs))
	for k := range st.catalogs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func catalogLine(key string, cs *almv1alpha1.CatalogSource, now time.Time) string {
	ready := apimeta.FindStatusCondition(cs.Status.Conditions, almv1alpha1.ConditionReady)
	state := "Ready unknown"
	if ready != nil {
		state = "Ready=" + string(ready.Status) + " " + ready.Reason
	}
	synced := "never synced"
	if cs.Status.LastSync != nil {
		synced = "synced " + duration.HumanDuration(now.Sub(cs.Status.LastSync.Time)) + " ago"
	}
	return fmt.Sprintf("%s: %s, %d package(s), %d bundle(s), %d rejected, %s", key, state, cs.Status.PackageCount,
		cs.Status.BundleCount, cs.Status.RejectedCount, synced)
}

func writeResolution(w io.Writer, at *almv1alpha1.AppType) {
	fmt.Fprintln(w, "\nResolution (why each candidate was or was not chosen):")
	if len(at.Status.Resolution) == 0 {
		fmt.Fprintln(w, "  no candidates")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "  CANDIDATE\tVERSION\tCATALOG\tCHOSEN\tREASON")
	for _, c := range at.Status.Resolution {
		chosen := ""
		if c.Chosen {
			chosen = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Name, c.Version, dash(c.Source), chosen, c.Reason)
	}
	_ = tw.Flush()
}

func writeConditions(w io.Writer, st *clusterState, at *almv1alpha1.AppType) {
	fmt.Fprintln(w, "\nConditions:")
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "  OBJECT\tTYPE\tSTATUS\tREASON\tMESSAGE")
	row := func(obj string, conds []metav1.Condition) {
		for _, c := range conds {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", obj, c.Type, c.Status, c.Reason, oneLine(c.Message, 0))
		}
	}
	row("AppType/"+at.Name, at.Status.Conditions)
	for _, ov := range st.versionsOf(at) {
		row("OperatorVersion/"+ov.Name, ov.Status.Conditions)
	}
	for _, key := range st.catalogKeys() {
		row("CatalogSource/"+key, st.catalogs[key].Status.Conditions)
	}
	_ = tw.Flush()
}

func writeOwned(w io.Writer, ov *almv1alpha1.OperatorVersion) {
	fmt.Fprintf(w, "\nObjects %s owns (%d):\n", ov.Name, len(ov.Status.Owned))
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "  KIND\tNAMESPACE\tNAME")
	for _, o := range ov.Status.Owned {
		kind := o.Kind
		if o.Group != "" {
			kind += "." + o.Group
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", kind, dash(o.Namespace), o.Name)
	}
	_ = tw.Flush()
}

// writeEvents writes the latest events of the AppType and its package's OperatorVersions.
func writeEvents(w io.Writer, st *clusterState, at *almv1alpha1.AppType) {
	names := map[string]bool{"AppType/" + at.Name: true}
	for _, ov := range st.versionsOf(at) {
		names["OperatorVersion/"+ov.Name] = true
	}
	var events []corev1.Event
	for _, e := range st.events {
		if names[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] {
			events = append(events, e)
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return eventTime(events[i]).Before(eventTime(events[j])) })
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	fmt.Fprintln(w, "\nRecent events:")
	if len(events) == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, "  AGE\tTYPE\tOBJECT\tREASON\tMESSAGE")
	for _, e := range events {
		fmt.Fprintf(tw, "  %s\t%s\t%s/%s\t%s\t%s\n", duration.HumanDuration(st.now.Sub(eventTime(e))), e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, oneLine(e.Message, 0))
	}
	_ = tw.Flush()
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e corev1.Event) time.Time {
	t := e.CreationTimestamp.Time
	for _, c := range []time.Time{e.EventTime.Time, e.LastTimestamp.Time, e.FirstTimestamp.Time} {
		if c.After(t) {
			t = c
		}
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	return t
}

func rangeOf(at *almv1alpha1.AppType) string {
	if at.Spec.VersionRange == "" {
		return ""
	}
	return ", range " + at.Spec.VersionRange
}

// oneLine puts s on one line and, when limit > 0, cuts it to limit characters.
func oneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if limit > 0 && len(s) > limit {
		return s[:limit-3] + "..."
	}
	return s
}

func dash(s string) string { return orDefault(s, "-") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
