package konnectsim

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/Kong/sdk-konnect-go/models/components"
	"github.com/Kong/sdk-konnect-go/models/operations"
)

func TestGroupMemberships(t *testing.T) {
	s := startServer(t, Options{})
	sdk := newSDK(s, DefaultToken)
	ctx := context.Background()
	groupType := components.CreateControlPlaneRequestClusterTypeClusterTypeControlPlaneGroup
	res, err := sdk.ControlPlanes.CreateControlPlane(ctx, components.CreateControlPlaneRequest{Name: "group", ClusterType: &groupType})
	if err != nil {
		t.Fatal(err)
	}
	group := res.ControlPlane.ID
	var members []string
	for _, name := range []string{"a", "b", "c"} {
		members = append(members, createControlPlane(t, sdk, name, nil).ID)
	}
	plain := members[0]
	put := func(id string, ids ...string) error {
		m := make([]components.Members, len(ids))
		for i, id := range ids {
			m[i] = components.Members{ID: id}
		}
		_, err := sdk.ControlPlaneGroups.PutControlPlanesIDGroupMemberships(ctx, id, &components.GroupMembership{Members: m})
		return err
	}
	list := func(size int64) []string {
		t.Helper()
		var ids []string
		var after *string
		for pages := 0; pages < 10; pages++ {
			res, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberships(ctx, operations.GetControlPlanesIDGroupMembershipsRequest{ControlPlaneID: group, PageSize: &size, PageAfter: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, cp := range res.ListGroupMemberships.Data {
				ids = append(ids, cp.ID)
			}
			if total := res.ListGroupMemberships.Meta.Page.Total; total == nil || int(*total) != len(s.GroupMembers(group)) {
				t.Errorf("meta.page.total = %v", total)
			}
			next := res.ListGroupMemberships.Meta.Page.Next
			if next == nil {
				return ids
			}
			after = ptr(mustQuery(t, *next, "page[after]"))
		}
		t.Fatal("no last page")
		return nil
	}

	if err := put(group, members...); err != nil {
		t.Fatal(err)
	}
	if got := list(2); !slices.Equal(got, members) {
		t.Errorf("members over pages of 2 = %v, want %v", got, members)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsRemove(ctx, group, &components.GroupMembership{Members: []components.Members{{ID: members[1]}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.ControlPlaneGroups.PostControlPlanesIDGroupMembershipsAdd(ctx, group, &components.GroupMembership{Members: []components.Members{{ID: members[1]}, {ID: members[0]}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.GroupMembers(group), []string{members[0], members[2], members[1]}; !slices.Equal(got, want) {
		t.Errorf("after remove and add: %v, want %v", got, want)
	}
	status, err := sdk.ControlPlaneGroups.GetControlPlanesIDGroupMemberStatus(ctx, members[2])
	if err != nil || status.GroupMemberStatus == nil || !status.GroupMemberStatus.IsMember {
		t.Errorf("member status of a member: %+v, %v", status, err)
	}

	// What Konnect refuses.
	for name, tc := range map[string]struct {
		group string
		ids   []string
		want  int
	}{
		"not a group":         {plain, []string{members[1]}, http.StatusBadRequest},
		"unknown group":       {"00000000-0000-4000-8000-000000000000", nil, http.StatusNotFound},
		"unknown member":      {group, []string{"00000000-0000-4000-8000-000000000000"}, http.StatusBadRequest},
		"a group as a member": {group, []string{group}, http.StatusBadRequest},
	} {
		if err := put(tc.group, tc.ids...); sdkStatus(err) != tc.want {
			t.Errorf("%s: error %v, want HTTP %d", name, err, tc.want)
		}
	}

	// A deleted control plane leaves every group.
	if _, err := sdk.ControlPlanes.DeleteControlPlane(ctx, members[2]); err != nil {
		t.Fatal(err)
	}
	if got := list(10); !slices.Equal(got, []string{members[0], members[1]}) {
		t.Errorf("after deleting a member: %v", got)
	}
}

// mustQuery reads a query parameter of a next-page link.
func mustQuery(t testing.TB, link, key string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get(key) == "" {
		t.Fatalf("next link %q has no %s", link, key)
	}
	return u.Query().Get(key)
}
