// Package retag brings the Konnect entities of the operator's objects to a tag scheme (entity.TagScheme) in place:
// it finds each object's entity by its k8s-uid tag (a label on control planes) in a list of its control plane,
// adds the identity tags the scheme has and the entity lacks with an update of that same entity (same Konnect ID;
// nothing is created or deleted), and verifies the result with a second list. It is the work of the Konnect
// operator's hand-over (controllers/konnect/handoff) and may run on any replica, leader or not, any number of
// times: an entity that has its tags already is not written again.
package retag

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/controllers/konnect/entity"
	"github.com/almproject/alm/controllers/konnect/konnectapi"
)

// Report counts what a re-tagging found and did.
type Report struct {
	// Entities are the objects' entities found in Konnect; Retagged the ones updated with the scheme's tags (the
	// others had them already).
	Entities, Retagged int
	// Missing are objects with a Konnect ID whose entity no list shows (deleted out of band: the loop creates it
	// again, with the scheme's tags); Skipped are objects whose references do not resolve (the loop cannot sync them
	// either; it tags them once it can).
	Missing, Skipped int
}

func (r Report) String() string {
	return fmt.Sprintf("%d entities, %d re-tagged, %d missing in Konnect, %d with unresolved references", r.Entities, r.Retagged, r.Missing, r.Skipped)
}

func (r *Report) add(o Report) {
	r.Entities += o.Entities
	r.Retagged += o.Retagged
	r.Missing += o.Missing
	r.Skipped += o.Skipped
}

// Retagger re-tags the entities of one kind.
type Retagger interface {
	Retag(ctx context.Context) (Report, error)
}

// All re-tags every kind in order (control planes first: a gateway entity's control plane must resolve) and sums
// the reports; it stops at the first error.
func All(ctx context.Context, kinds []Retagger) (Report, error) {
	var total Report
	for _, k := range kinds {
		rep, err := k.Retag(ctx)
		total.add(rep)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// kindRetagger is the Retagger of the objects of one kind.
type kindRetagger[T client.Object] struct {
	c       client.Reader
	kind    entity.Kind[T]
	clients konnectapi.ClientFactory
	id      entity.Identity
}

// For returns the Retagger of kind's objects (read through c) to scheme, talking to Konnect through clients.
func For[T client.Object](c client.Reader, rs *runtime.Scheme, kind entity.Kind[T], clients konnectapi.ClientFactory, scheme entity.TagScheme) (Retagger, error) {
	id, err := entity.IdentityOf(rs, kind.New(), scheme)
	if err != nil {
		return nil, err
	}
	return &kindRetagger[T]{c: c, kind: kind, clients: clients, id: id}, nil
}

// group is the objects of one control plane (of one auth configuration, for control planes).
type group[T client.Object] struct {
	refs entity.Refs
	objs []T
}

// Retag re-tags the entities of every object of the kind that has one.
func (k *kindRetagger[T]) Retag(ctx context.Context) (Report, error) {
	groups, skipped, err := k.groups(ctx)
	rep := Report{Skipped: skipped}
	if err != nil {
		return rep, err
	}
	for _, g := range groups {
		r, err := k.retagGroup(ctx, g)
		rep.add(r)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// groups are the objects whose entity the operator wrote (a Konnect ID in their status, not a mirror), by the
// control plane their references resolve to, in a fixed order.
func (k *kindRetagger[T]) groups(ctx context.Context) ([]*group[T], int, error) {
	list := k.kind.NewList()
	if err := k.c.List(ctx, list); err != nil {
		return nil, 0, fmt.Errorf("listing %s objects: %w", k.kind.Name(), err)
	}
	byKey, skipped := map[string]*group[T]{}, 0
	for _, obj := range k.kind.Items(list) {
		if !k.kind.Managed(obj) || !obj.GetDeletionTimestamp().IsZero() || k.kind.State(obj).ID == "" ||
			(k.kind.Mirror != nil && k.kind.Mirror.MirrorID(obj) != "") {
			continue
		}
		refs, checks, err := k.kind.Resolve(ctx, k.c, obj)
		if err != nil {
			return nil, 0, fmt.Errorf("resolving the references of %s %s: %w", k.kind.Name(), klog.KObj(obj), err)
		}
		if !resolved(checks) {
			skipped++
			continue
		}
		key := string(refs.Auth.UID) + "/" + refs.ControlPlaneID
		if byKey[key] == nil {
			byKey[key] = &group[T]{refs: refs}
		}
		byKey[key].objs = append(byKey[key].objs, obj)
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([]*group[T], 0, len(keys))
	for _, key := range keys {
		out = append(out, byKey[key])
	}
	return out, skipped, nil
}

func resolved(checks []entity.RefCheck) bool {
	for _, c := range checks {
		if !c.OK && !c.Advisory && !c.Absent {
			return false
		}
	}
	return true
}

// retagGroup updates the entities of one control plane that lack tags of the scheme, then lists them again to
// verify that each has them, under the same ID.
func (k *kindRetagger[T]) retagGroup(ctx context.Context, g *group[T]) (Report, error) {
	var rep Report
	api, _, err := k.clients.API(ctx, g.refs.Auth)
	if err != nil {
		return rep, fmt.Errorf("the Konnect client of KonnectAPIAuthConfiguration %s: %w", klog.KObj(g.refs.Auth), err)
	}
	found, err := k.byUID(ctx, api, g.refs.ControlPlaneID)
	if err != nil {
		return rep, err
	}
	ids := map[string]string{} // object UID -> entity ID
	for _, obj := range g.objs {
		e, ok := found[string(obj.GetUID())]
		if !ok {
			rep.Missing++
			continue
		}
		rep.Entities++
		ids[string(obj.GetUID())] = e.ID
		body, lacking := k.retagged(obj, e)
		if !lacking {
			continue
		}
		if err := k.writeOnly(obj, g.refs, body); err != nil {
			return rep, err
		}
		got, err := api.Update(ctx, k.kind.Type(), g.refs.ControlPlaneID, e.ID, body)
		if err != nil {
			return rep, fmt.Errorf("re-tagging %s %s (Konnect %s %s): %w", k.kind.Name(), klog.KObj(obj), k.kind.Type(), e.ID, err)
		}
		if got.ID != "" && got.ID != e.ID {
			return rep, fmt.Errorf("re-tagging %s %s: Konnect answered %s %s, want the same entity %s", k.kind.Name(), klog.KObj(obj), k.kind.Type(), got.ID, e.ID)
		}
		rep.Retagged++
	}
	return rep, k.verify(ctx, api, g, ids)
}

// writeOnly puts the values the object declares for the kind's WriteOnly keys into body, in place of what Konnect
// answered for them (a hash, which written back would become the value).
func (k *kindRetagger[T]) writeOnly(obj T, refs entity.Refs, body map[string]any) error {
	if len(k.kind.WriteOnly) == 0 {
		return nil
	}
	desired, err := k.kind.Desired(obj, refs)
	if err != nil {
		return fmt.Errorf("re-tagging %s %s: %w", k.kind.Name(), klog.KObj(obj), err)
	}
	for _, key := range k.kind.WriteOnly {
		if v, ok := desired[key]; ok {
			body[key] = v
		}
	}
	return nil
}

// verify lists the group's entities again: each one found before has the scheme's tags, under the same ID.
func (k *kindRetagger[T]) verify(ctx context.Context, api konnectapi.API, g *group[T], ids map[string]string) error {
	after, err := k.byUID(ctx, api, g.refs.ControlPlaneID)
	if err != nil {
		return err
	}
	for _, obj := range g.objs {
		id, ok := ids[string(obj.GetUID())]
		if !ok {
			continue
		}
		e, ok := after[string(obj.GetUID())]
		if !ok || e.ID != id {
			return fmt.Errorf("verifying %s %s: its Konnect %s %s is no longer listed (found %q)", k.kind.Name(), klog.KObj(obj), k.kind.Type(), id, e.ID)
		}
		if _, lacking := k.retagged(obj, e); lacking {
			return fmt.Errorf("verifying %s %s: Konnect %s %s still lacks tags of scheme %s", k.kind.Name(), klog.KObj(obj), k.kind.Type(), id, k.id.Scheme)
		}
	}
	return nil
}

// byUID lists the kind's entities of a control plane (every control plane's, for control planes) by the kind's
// identity tag and indexes them by their k8s-uid.
func (k *kindRetagger[T]) byUID(ctx context.Context, api konnectapi.API, cpID string) (map[string]konnectapi.Entity, error) {
	list, err := api.List(ctx, k.kind.Type(), cpID, entity.TagKind+":"+k.kind.Name())
	if err != nil {
		return nil, fmt.Errorf("listing the Konnect %s entities of %s objects: %w", k.kind.Type(), k.kind.Name(), err)
	}
	out := make(map[string]konnectapi.Entity, len(list))
	for _, e := range list {
		uid := entity.TagValue(e.Body["tags"], entity.TagUID)
		if labels, ok := e.Body["labels"].(map[string]any); ok && k.kind.Type() == konnectapi.TypeControlPlane {
			uid, _ = labels[entity.TagUID].(string)
		}
		if uid != "" {
			out[uid] = e
		}
	}
	return out, nil
}

// retagged returns the body that gives entity e the identity of obj in the scheme, and whether e lacks any of it.
// Gateway entities are replaced whole, so the body is e's own with the tags added (nothing else of it changes);
// a control plane's update is a patch of its labels.
func (k *kindRetagger[T]) retagged(obj T, e konnectapi.Entity) (map[string]any, bool) {
	if k.kind.Type() == konnectapi.TypeControlPlane {
		labels := map[string]any{}
		if have, ok := e.Body["labels"].(map[string]any); ok {
			maps.Copy(labels, have)
		}
		lacking := false
		for key, v := range k.id.Labels(k.kind.Name(), obj) {
			if _, ok := labels[key]; !ok {
				labels[key], lacking = v, true
			}
		}
		return map[string]any{"labels": labels}, lacking
	}
	have, _ := e.Body["tags"].([]any)
	tags := slices.Clone(have)
	for _, t := range k.id.Tags(k.kind.Name(), obj) {
		if !slices.Contains(tags, any(t)) {
			tags = append(tags, t)
		}
	}
	body := maps.Clone(e.Body)
	body["tags"] = tags
	return body, len(tags) > len(have)
}
