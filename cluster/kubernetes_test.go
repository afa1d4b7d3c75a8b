//go:build !race

// Built without -race like cluster_test.go: several members in one process.

package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ringactor/ringactor/cluster"
)

// TestKubernetesProvider runs two members whose provider watches the pods
// of a fake API server, as the kubelet and the API server would show them:
// both find each other once their pods are ready, identities spread over
// both, and when B's pod is deleted A drops B and serves every identity.
func TestKubernetesProvider(t *testing.T) {
	const ns, name = "apps", "k8s"
	cs := fake.NewClientset()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard, not a speed bound
	defer cancel()
	for i, pod := range []string{"ringactor-0", "ringactor-1"} {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns, Labels: map[string]string{cluster.KubernetesClusterLabel: name}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", i+1),
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	start := func(pod string) *cluster.Member {
		p, err := cluster.Kubernetes(cluster.WithKubernetesClient(cs), cluster.WithKubernetesNamespace(ns), cluster.WithKubernetesPodName(pod))
		if err != nil {
			t.Fatal(err)
		}
		return startIsolatedMember(t, name, p, kinds())
	}
	a := start("ringactor-0")
	b := start("ringactor-1")

	// The pods carry the members' annotations.
	for _, pod := range []string{"ringactor-0", "ringactor-1"} {
		got, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations[cluster.KubernetesMemberAnnotation] == "" || got.Annotations[cluster.KubernetesAddressAnnotation] == "" ||
			got.Annotations[cluster.KubernetesKindsAnnotation] == "" {
			t.Fatalf("pod %s: annotations %v", pod, got.Annotations)
		}
	}
	// Before their pods are ready, each member sees only itself.
	for _, m := range []*cluster.Member{a, b} {
		if err := m.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The readiness probes pass (the test plays the kubelet).
	for _, pod := range []string{"ringactor-0", "ringactor-1"} {
		setPodReady(t, ctx, cs, ns, pod)
	}
	for _, m := range []*cluster.Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	requestSpread(t, ctx, a, "k8s-a", 24)
	requestSpread(t, ctx, b, "k8s-b", 24)
	if a.Activations() == 0 || b.Activations() == 0 {
		t.Fatalf("activations A=%d B=%d: want identities on both members", a.Activations(), b.Activations())
	}

	// B's pod is deleted: A drops B and serves every identity.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "ringactor-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for a.Cluster().MemberList.Members().Len() != 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("A still sees %d members after B's pod was deleted", a.Cluster().MemberList.Members().Len())
		case <-time.After(20 * time.Millisecond):
		}
	}
	requestSpread(t, ctx, a, "k8s-b", 24) // B's identities, now placed on A
	closeMember(t, b)
	closeMember(t, a)
	// A leaving gracefully removes its annotations.
	got, err := cs.CoreV1().Pods(ns).Get(ctx, "ringactor-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := got.Annotations[cluster.KubernetesMemberAnnotation]; ok {
		t.Errorf("pod ringactor-0 still names member %q after A closed", id)
	}
}

// setPodReady sets the pod's Ready condition, as the kubelet does once the
// readiness probe passes.
func setPodReady(t *testing.T, ctx context.Context, cs *fake.Clientset, ns, pod string) {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestKubernetesProviderErrors checks the provider's typed errors: no
// namespace, and a pod it cannot annotate (RBAC or a wrong pod name).
func TestKubernetesProviderErrors(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	cs := fake.NewClientset()
	if _, err := cluster.Kubernetes(cluster.WithKubernetesClient(cs)); !errors.Is(err, cluster.ErrKubernetes) {
		// Outside a pod there is no service-account namespace file either.
		t.Fatalf("no namespace: %v, want ErrKubernetes", err)
	}
	p, err := cluster.Kubernetes(cluster.WithKubernetesClient(cs), cluster.WithKubernetesNamespace("apps"), cluster.WithKubernetesPodName("nosuchpod"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = cluster.Start(ctx, "k8s", p, kinds())
	if !errors.Is(err, cluster.ErrKubernetes) || !strings.Contains(err.Error(), "nosuchpod") {
		t.Fatalf("start on a missing pod: %v, want ErrKubernetes naming the pod", err)
	}
}
