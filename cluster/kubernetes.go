package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The pod label and annotations the Kubernetes provider reads and writes.
// The label selects the pods of one cluster (the manifests under deploy/
// set it on the pod template; a member also sets it on its own pod); the
// annotations say where a member listens and which kinds it hosts.
const (
	// KubernetesClusterLabel holds the cluster name on every member's pod.
	KubernetesClusterLabel = "ringactor.io/cluster"
	// KubernetesMemberAnnotation holds a member's Proto.Actor member id.
	KubernetesMemberAnnotation = "ringactor.io/member-id"
	// KubernetesAddressAnnotation holds the HOST:PORT a member's remote
	// is reached at (its advertised address).
	KubernetesAddressAnnotation = "ringactor.io/address"
	// KubernetesKindsAnnotation holds the comma-separated kinds a member
	// hosts.
	KubernetesKindsAnnotation = "ringactor.io/kinds"
)

// ErrKubernetes is the error of a Kubernetes provider that cannot reach
// the API server, find its own pod or annotate it.
var ErrKubernetes = errors.New("ringactor/cluster: kubernetes provider")

// KubernetesOption configures the Kubernetes provider.
type KubernetesOption func(*kubernetesProvider)

// WithKubernetesClient gives the provider its API client (a fake
// clientset in tests; a client of a kubeconfig outside a cluster). Without
// it the provider uses the pod's service account (rest.InClusterConfig).
func WithKubernetesClient(c kubernetes.Interface) KubernetesOption {
	return func(p *kubernetesProvider) { p.client = c }
}

// WithKubernetesNamespace sets the namespace whose pods are watched and
// where the member's own pod is (default: $POD_NAMESPACE, else the service
// account's namespace file).
func WithKubernetesNamespace(ns string) KubernetesOption {
	return func(p *kubernetesProvider) { p.namespace = ns }
}

// WithKubernetesPodName sets the member's own pod (default: $POD_NAME, else
// the host name, which Kubernetes sets to the pod's name).
func WithKubernetesPodName(name string) KubernetesOption {
	return func(p *kubernetesProvider) { p.podName = name }
}

// WithKubernetesTimeout bounds each call to the API server (default 10s).
func WithKubernetesTimeout(d time.Duration) KubernetesOption {
	return func(p *kubernetesProvider) { p.timeout = d }
}

// Kubernetes returns a cluster provider that finds the members through the
// Kubernetes API server: every member annotates its own pod with its member
// id, advertised address and kinds (and labels it with the cluster name),
// and every member and client watches the pods of the namespace labelled
// with the cluster name. A pod is a member while it runs, is not being
// deleted and is ready (a member counts its own pod before its readiness
// probe passes: /readyz waits for the member to see itself). A deleted or
// terminating pod leaves every topology at once, so its identities are
// placed again. It needs RBAC to get, list, watch and patch pods in its
// namespace (deploy/base/rbac.yaml).
//
// Proto.Actor's own Kubernetes provider was not used: it takes a concrete
// *kubernetes.Clientset (no fake clientset in tests), reads the pod name
// only from the host name, and drops members whose containers are not
// ready, so a member whose readiness probe waits to see itself in the
// topology would never become ready.
func Kubernetes(opts ...KubernetesOption) (pcluster.ClusterProvider, error) {
	p := &kubernetesProvider{timeout: 10 * time.Second, done: make(chan struct{}), synced: make(chan struct{})}
	for _, o := range opts {
		o(p)
	}
	if p.namespace == "" {
		p.namespace = os.Getenv("POD_NAMESPACE")
	}
	if p.namespace == "" {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			p.namespace = strings.TrimSpace(string(b))
		}
	}
	if p.namespace == "" {
		return nil, fmt.Errorf("%w: no namespace (set POD_NAMESPACE or WithKubernetesNamespace)", ErrKubernetes)
	}
	if p.podName == "" {
		p.podName = os.Getenv("POD_NAME")
	}
	if p.podName == "" {
		p.podName, _ = os.Hostname()
	}
	if p.client == nil {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("%w: not in a pod (%w); give WithKubernetesClient", ErrKubernetes, err)
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKubernetes, err)
		}
		p.client = c
	}
	p.logger.Store(slog.Default())
	return p, nil
}

// kubernetesProvider implements pcluster.ClusterProvider on the pods of a
// namespace.
type kubernetesProvider struct {
	client    kubernetes.Interface
	namespace string
	podName   string
	timeout   time.Duration
	logger    atomic.Pointer[slog.Logger]

	c      *pcluster.Cluster
	name   string
	selfID string
	member bool // started as a member (its pod is annotated)

	mu sync.Mutex // serialises publish
	// Fencing (see kubernetesFence): baseID is the actor system's id,
	// incarnation counts the member's rejoins, wasReady says its pod has
	// been ready, fence that it is not now (the others dropped it).
	baseID      string
	incarnation int
	wasReady    bool
	fence       atomic.Bool
	onRemoved   func(reason string)
	last        []string // the member ids published last, sorted
	lost        map[string]string
	stopOnce    sync.Once
	done        chan struct{} // closed at Shutdown: the informer stops
	synced      chan struct{} // closed after the first topology was published
	syncOnce    sync.Once
	informer    cache.SharedIndexInformer
}

func (p *kubernetesProvider) setLogger(l *slog.Logger) { p.logger.Store(l) }

// settled is closed once the provider has listed the pods and published the
// topology they make.
func (p *kubernetesProvider) settled() <-chan struct{} { return p.synced }

// StartMember annotates the member's pod and starts watching the cluster's
// pods.
func (p *kubernetesProvider) StartMember(c *pcluster.Cluster) error {
	p.init(c)
	p.member = true
	host, port, err := c.ActorSystem.GetHostPort()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKubernetes, err)
	}
	kinds := c.GetClusterKinds()
	slices.Sort(kinds)
	if err := p.annotate(map[string]any{
		"labels": map[string]string{KubernetesClusterLabel: p.name},
		"annotations": map[string]string{
			KubernetesMemberAnnotation:  p.selfID,
			KubernetesAddressAnnotation: net.JoinHostPort(host, strconv.Itoa(port)),
			KubernetesKindsAnnotation:   strings.Join(kinds, ","),
		},
	}); err != nil {
		return fmt.Errorf("%w: annotating pod %s/%s: %w", ErrKubernetes, p.namespace, p.podName, err)
	}
	return p.watch()
}

// StartClient watches the cluster's pods without registering a member.
func (p *kubernetesProvider) StartClient(c *pcluster.Cluster) error {
	p.init(c)
	return p.watch()
}

func (p *kubernetesProvider) init(c *pcluster.Cluster) {
	p.c, p.name, p.selfID, p.baseID = c, c.Config.Name, c.ActorSystem.ID, c.ActorSystem.ID
	p.lost = map[string]string{}
}

// annotate merges meta into the metadata of the member's own pod.
func (p *kubernetesProvider) annotate(meta map[string]any) error {
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKubernetes, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	_, err = p.client.CoreV1().Pods(p.namespace).Patch(ctx, p.podName, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// watch starts an informer on the namespace's pods of this cluster and
// publishes the topology at every change.
func (p *kubernetesProvider) watch() error {
	factory := informers.NewSharedInformerFactoryWithOptions(p.client, 0,
		informers.WithNamespace(p.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{KubernetesClusterLabel: p.name}.String()
		}))
	p.informer = factory.Core().V1().Pods().Informer()
	changed := func(any) { p.publish() }
	if _, err := p.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, n any) { p.publish() },
		DeleteFunc: changed,
	}); err != nil {
		return fmt.Errorf("%w: %w", ErrKubernetes, err)
	}
	go p.informer.Run(p.done)
	go func() {
		if cache.WaitForCacheSync(p.done, p.informer.HasSynced) {
			p.publish()
			p.syncOnce.Do(func() { close(p.synced) })
		}
	}()
	return nil
}

// publish computes the members from the informer's pods and hands them to
// Proto.Actor when they changed.
func (p *kubernetesProvider) publish() {
	if !p.informer.HasSynced() {
		return
	}
	var removed func(string)
	defer func() { // after mu is released
		if removed != nil {
			removed("its pod is not ready: the other members dropped it")
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	var members []*pcluster.Member
	addrs := map[string]string{}
	for _, o := range p.informer.GetStore().List() {
		pod, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		if p.member && pod.Name == p.podName {
			removed = p.kubernetesFence(pod)
		}
		if m, ok := podMember(pod, p.name, p.selfID); ok {
			members = append(members, m)
			addrs[m.Id] = m.Address()
		}
	}
	slices.SortFunc(members, func(a, b *pcluster.Member) int { return strings.Compare(a.Id, b.Id) })
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.Id
	}
	if slices.Equal(ids, p.last) && p.last != nil {
		return
	}
	for _, id := range p.last {
		if _, ok := addrs[id]; !ok && id != p.selfID {
			p.logger.Load().Warn("ringactor/cluster: member lost: its pod is gone, terminating or not ready",
				"cluster", p.name, "member", id, "address", p.lost[id])
		}
	}
	p.lost = addrs
	p.last = ids
	p.c.MemberList.UpdateClusterTopology(members)
}

// kubernetesFence follows the member's own pod: once it has been ready, a
// pod that is not ready (its readiness probe failing, a starved member)
// has left the others' topology, and they place its identities elsewhere:
// the member is fenced (it serves nothing) and passivates every
// activation (the returned function, called without mu). When the pod is
// ready again the member rejoins as a new incarnation, a new member id in
// its pod's annotation (the others never take a dropped member id back).
// The caller holds mu.
func (p *kubernetesProvider) kubernetesFence(pod *corev1.Pod) func(string) {
	ready := podReady(pod) && pod.DeletionTimestamp == nil
	switch {
	case ready && p.fence.Load():
		p.incarnation++
		id := p.baseID + "." + strconv.Itoa(p.incarnation)
		if err := p.annotate(map[string]any{"annotations": map[string]string{KubernetesMemberAnnotation: id}}); err != nil {
			p.logger.Load().Warn("ringactor/cluster: rejoining as a new incarnation: annotating the pod failed; the member stays fenced",
				slog.String("pod", p.podName), slog.Any("error", err))
			p.incarnation--
			return nil
		}
		p.selfID = id
		p.fence.Store(false)
		p.logger.Load().Info("ringactor/cluster: pod ready again: rejoining as a new incarnation", slog.String("id", id))
	case ready:
		p.wasReady = true
	case p.wasReady && !p.fence.Load():
		p.fence.Store(true)
		p.logger.Load().Warn("ringactor/cluster: this member's pod is not ready: the others drop it; fenced, passivating every activation",
			slog.String("pod", p.podName))
		return p.onRemoved
	}
	return nil
}

// fenced reports whether the member's pod, once ready, is not ready now.
func (p *kubernetesProvider) fenced() bool { return p.fence.Load() }

// setOnRemoved gives the provider the member's passivation of every
// activation.
func (p *kubernetesProvider) setOnRemoved(f func(string)) {
	p.mu.Lock()
	p.onRemoved = f
	p.mu.Unlock()
}

// podMember returns the member a pod of cluster name holds: one whose pod
// runs, is not being deleted, carries the member annotations and is ready
// (the pod of self counts before it is ready).
func podMember(pod *corev1.Pod, name, self string) (*pcluster.Member, bool) {
	if pod.Labels[KubernetesClusterLabel] != name || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return nil, false
	}
	id := pod.Annotations[KubernetesMemberAnnotation]
	host, portS, err := net.SplitHostPort(pod.Annotations[KubernetesAddressAnnotation])
	if id == "" || err != nil {
		return nil, false
	}
	port, err := strconv.ParseUint(portS, 10, 16)
	if err != nil || port == 0 {
		return nil, false
	}
	if id != self && !podReady(pod) {
		return nil, false
	}
	var kinds []string
	if k := pod.Annotations[KubernetesKindsAnnotation]; k != "" {
		kinds = strings.Split(k, ",")
	}
	return &pcluster.Member{Id: id, Host: host, Port: int32(port), Kinds: kinds}, true
}

// podReady reports the pod's Ready condition.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Shutdown stops the watch; a member leaving gracefully removes its
// annotations first, so that the others drop it before its pod is gone.
func (p *kubernetesProvider) Shutdown(graceful bool) error {
	var err error
	p.stopOnce.Do(func() {
		if graceful && p.member {
			err = p.annotate(map[string]any{"annotations": map[string]any{
				KubernetesMemberAnnotation: nil, KubernetesAddressAnnotation: nil, KubernetesKindsAnnotation: nil,
			}})
			if apierrors.IsNotFound(err) {
				err = nil // the pod is gone already: nobody can see it
			} else if err != nil {
				err = fmt.Errorf("%w: removing the member annotations of pod %s/%s: %w", ErrKubernetes, p.namespace, p.podName, err)
			}
		}
		p.mu.Lock()
		close(p.done)
		p.mu.Unlock()
	})
	return err
}
