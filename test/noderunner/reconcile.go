package noderunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almproject/alm/test/noderunner/images"

	"github.com/almproject/alm/test/noderunner/deploystatus"
)

// Reconcile brings the local pods of one Deployment to its spec and writes its status.
func (r *Runner) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := r.log.WithValues("Deployment", req.String())
	d := &appsv1.Deployment{}
	if err := r.mgr.GetClient().Get(ctx, req.NamespacedName, d); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		d = nil
	}
	if d == nil || d.DeletionTimestamp != nil {
		r.removeDeployment(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	hash := templateHash(d)
	imgs, missing := r.podImages(ctx, d)
	var imgProblem *deploystatus.Problem
	if len(missing) > 0 {
		imgProblem = imageProblem(missing, r.images.Refs())
		log.Info("Deployment names an image the runner does not have", "problem", imgProblem.Message)
	} else if err := r.scale(d, hash, imgs); err != nil {
		return ctrl.Result{}, err
	}
	states := r.podStates(req.NamespacedName)
	status, recheck := deploystatus.Compute(d, hash, states, imgProblem, time.Now())
	if imgProblem != nil && (recheck == 0 || recheck > imageRetry) {
		recheck = imageRetry // the image may be built or pushed later: look again, as a kubelet retries a pull
	}
	if err := r.writeStatus(ctx, d, status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// writeStatus updates d's status if it changed, with d's resourceVersion (a conflict is retried by the caller).
func (r *Runner) writeStatus(ctx context.Context, d *appsv1.Deployment, status appsv1.DeploymentStatus) error {
	if equality.Semantic.DeepEqual(d.Status, status) {
		return nil
	}
	updated := d.DeepCopy()
	updated.Status = status
	if err := r.mgr.GetClient().Status().Update(ctx, updated); err != nil {
		return fmt.Errorf("updating the status of Deployment %s: %w", client.ObjectKeyFromObject(d), err)
	}
	return nil
}

// templateHash hashes d's pod template (and collisionCount) like the deployment controller's pod-template-hash.
func templateHash(d *appsv1.Deployment) string {
	h := fnv.New32a()
	data, _ := json.Marshal(d.Spec.Template)
	_, _ = h.Write(data)
	if d.Status.CollisionCount != nil {
		_, _ = h.Write([]byte(strconv.Itoa(int(*d.Status.CollisionCount))))
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// imageRetry is how often a Deployment whose image is missing is looked at again.
const imageRetry = 10 * time.Second

// podImages returns the images of d's containers, or those the runner neither has nor can pull.
func (r *Runner) podImages(ctx context.Context, d *appsv1.Deployment) (map[string]*images.Image, []*images.NotFoundError) {
	imgs := map[string]*images.Image{}
	var missing []*images.NotFoundError
	for _, c := range d.Spec.Template.Spec.Containers {
		img, err := r.images.Get(ctx, c.Image)
		if err != nil {
			var nf *images.NotFoundError
			if !errors.As(err, &nf) {
				r.log.Error(err, "Loading image", "image", c.Image)
				nf = &images.NotFoundError{Ref: c.Image, Cause: err}
			}
			missing = append(missing, nf)
			continue
		}
		imgs[c.Image] = img
	}
	return imgs, missing
}

// scale starts and stops pods of d: the new template gets spec.replicas pods; old pods stop once the new ones are
// all ready (RollingUpdate) or before new ones start (Recreate), or at once when scaled to 0.
func (r *Runner) scale(d *appsv1.Deployment, hash string, imgs map[string]*images.Image) error {
	key := client.ObjectKeyFromObject(d)
	desired := int(ptrOr(d.Spec.Replicas, 1))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	r.prune(key)
	var current, old []*pod
	for _, p := range r.deployments[key] {
		st := p.state()
		switch {
		case st.Terminating:
		case p.hash == hash:
			current = append(current, p)
		default:
			old = append(old, p)
		}
	}
	recreate := d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType
	if recreate || desired == 0 || readyCount(current) >= desired {
		stopAll(old)
	}
	if recreate && len(r.deployments[key]) > len(current) {
		return nil // old pods are still stopping
	}
	for len(current) < desired {
		p, err := newPod(d, hash, imgs, r.deps, r.log, r.notifier(key))
		if err != nil {
			return err
		}
		p.start(r.deps)
		r.deployments[key] = append(r.deployments[key], p)
		current = append(current, p)
	}
	if len(current) > desired {
		// Not-ready pods go first, then the newest.
		sort.SliceStable(current, func(i, j int) bool { return current[i].state().Ready && !current[j].state().Ready })
		stopAll(current[desired:])
	}
	return nil
}

func readyCount(pods []*pod) int {
	n := 0
	for _, p := range pods {
		if p.state().Ready {
			n++
		}
	}
	return n
}

func stopAll(pods []*pod) {
	for _, p := range pods {
		p.stop()
	}
}

// prune forgets pods whose processes have all ended. r.mu is held.
func (r *Runner) prune(key types.NamespacedName) {
	var live []*pod
	for _, p := range r.deployments[key] {
		select {
		case <-p.done:
		default:
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		delete(r.deployments, key)
		return
	}
	r.deployments[key] = live
}

// removeDeployment stops the pods of a deleted Deployment and forgets those already stopped.
func (r *Runner) removeDeployment(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stopAll(r.deployments[key])
	r.prune(key)
}

func (r *Runner) podStates(key types.NamespacedName) []deploystatus.Pod {
	r.mu.Lock()
	r.prune(key)
	pods := append([]*pod(nil), r.deployments[key]...)
	r.mu.Unlock()
	states := make([]deploystatus.Pod, 0, len(pods))
	for _, p := range pods {
		states = append(states, p.state())
	}
	return states
}
