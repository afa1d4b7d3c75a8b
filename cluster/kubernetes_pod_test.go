package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodMember checks which pods the Kubernetes provider counts as members.
func TestPodMember(t *testing.T) {
	pod := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{KubernetesClusterLabel: "c"},
				Annotations: map[string]string{KubernetesMemberAnnotation: "id1", KubernetesAddressAnnotation: "10.0.0.7:6000",
					KubernetesKindsAnnotation: "add,sum"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		if mut != nil {
			mut(p)
		}
		return p
	}
	m, ok := podMember(pod(nil), "c", "self")
	if !ok || m.Id != "id1" || m.Host != "10.0.0.7" || m.Port != 6000 || len(m.Kinds) != 2 || m.Kinds[1] != "sum" {
		t.Fatalf("ready pod: %v %v", m, ok)
	}
	notReady := func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
	for name, mut := range map[string]func(*corev1.Pod){
		"other cluster": func(p *corev1.Pod) { p.Labels[KubernetesClusterLabel] = "d" },
		"terminating":   func(p *corev1.Pod) { now := metav1.NewTime(time.Unix(1, 0)); p.DeletionTimestamp = &now },
		"pending":       func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending },
		"not ready":     notReady,
		"no condition":  func(p *corev1.Pod) { p.Status.Conditions = nil },
		"no member id":  func(p *corev1.Pod) { delete(p.Annotations, KubernetesMemberAnnotation) },
		"no port":       func(p *corev1.Pod) { p.Annotations[KubernetesAddressAnnotation] = "10.0.0.7" },
		"port 0":        func(p *corev1.Pod) { p.Annotations[KubernetesAddressAnnotation] = "10.0.0.7:0" },
		"port too big":  func(p *corev1.Pod) { p.Annotations[KubernetesAddressAnnotation] = "10.0.0.7:70000" },
	} {
		if m, ok := podMember(pod(mut), "c", "self"); ok {
			t.Errorf("%s: counted as member %v", name, m)
		}
	}
	// A member counts its own pod before its readiness probe passes.
	if _, ok := podMember(pod(notReady), "c", "id1"); !ok {
		t.Error("own pod, not ready yet: not counted")
	}
	if m, ok := podMember(pod(func(p *corev1.Pod) { delete(p.Annotations, KubernetesKindsAnnotation) }), "c", "self"); !ok || len(m.Kinds) != 0 {
		t.Errorf("no kinds: %v %v", m, ok)
	}
}
