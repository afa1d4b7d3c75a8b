package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
)

// manifests are the resources of deploy/base, decoded strictly into the
// Kubernetes API types (an unknown field is an error). .ci/run also renders
// deploy/base and deploy/overlays/gpu with kustomize itself; kustomize's
// library is not linked into this test: it imports the plugin package,
// which makes the Go linker bind every symbol at start-up, and go-nvml
// leaves the NVML symbols that the installed driver lacks unresolved.
type manifests struct {
	sts      *appsv1.StatefulSet
	services map[string]*corev1.Service
	sa       *corev1.ServiceAccount
	role     *rbacv1.Role
	binding  *rbacv1.RoleBinding
	pdb      *policyv1.PodDisruptionBudget
}

// kustomization is the part of a kustomization.yaml this test reads.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resources  []string
	Patches    []struct {
		Path   string `json:"path"`
		Target struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"target"`
	} `json:"patches"`
	Labels []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
	} `json:"labels"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// readKustomization decodes dir/kustomization.yaml strictly.
func readKustomization(t *testing.T, dir string) kustomization {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.Kind != "Kustomization" {
		t.Fatalf("%s/kustomization.yaml: kind %q", dir, k.Kind)
	}
	return k
}

// docs splits a YAML file into its documents.
func docs(b []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(b, []byte("\n---")) {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

// readBase decodes every resource deploy/base lists, strictly.
func readBase(t *testing.T) manifests {
	t.Helper()
	const dir = "../../deploy/base"
	k := readKustomization(t, dir)
	r := manifests{services: map[string]*corev1.Service{}}
	for _, f := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs(b) {
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(d, &meta); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch meta.Kind {
			case "StatefulSet":
				r.sts = &appsv1.StatefulSet{}
				obj = r.sts
			case "Service":
				s := &corev1.Service{}
				obj = s
				r.services[meta.Metadata.Name] = s
			case "ServiceAccount":
				r.sa = &corev1.ServiceAccount{}
				obj = r.sa
			case "Role":
				r.role = &rbacv1.Role{}
				obj = r.role
			case "RoleBinding":
				r.binding = &rbacv1.RoleBinding{}
				obj = r.binding
			case "PodDisruptionBudget":
				r.pdb = &policyv1.PodDisruptionBudget{}
				obj = r.pdb
			default:
				t.Fatalf("%s holds a %q, which this test does not know", f, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(d, obj); err != nil {
				t.Fatalf("%s: %s %s: %v", f, meta.Kind, meta.Metadata.Name, err)
			}
		}
	}
	// kustomize adds these labels to every resource (not to selectors).
	for _, l := range k.Labels {
		if l.IncludeSelectors {
			t.Errorf("labels with includeSelectors: a selector of a running StatefulSet cannot change")
		}
	}
	return r
}

// serveEnv returns the environment variables `ringactor serve -h` lists.
func serveEnv(t *testing.T) []string {
	t.Helper()
	code, _, stderr := runCLI(t, "serve", "-h")
	if code != exitOK {
		t.Fatalf("serve -h: status %d\n%s", code, stderr)
	}
	_, env, ok := strings.Cut(stderr, "\nEnvironment")
	if !ok {
		t.Fatalf("serve -h lists no environment:\n%s", stderr)
	}
	var names []string
	for _, f := range strings.Fields(env) {
		if strings.HasPrefix(f, "RINGACTOR_") {
			names = append(names, f)
		}
	}
	return names
}

// TestManifests decodes deploy/base and deploy/overlays/gpu and checks them
// against what serve uses: every RINGACTOR_ variable is one serve reads,
// the bind and admin ports are the container's ports, the probes' paths are
// the admin endpoint's, the labels select the pods the Kubernetes provider
// watches, the RBAC grants what it calls, the grace period covers the
// graceful leave; the GPU overlay asks for nvidia.com/gpu.
func TestManifests(t *testing.T) {
	known := serveEnv(t)
	{
		{
			r := readBase(t)
			if r.sts == nil || r.sa == nil || r.role == nil || r.binding == nil || r.pdb == nil || len(r.services) != 2 {
				t.Fatalf("missing resources: %+v", r)
			}
			pod := r.sts.Spec.Template
			if len(pod.Spec.Containers) != 1 {
				t.Fatalf("%d containers", len(pod.Spec.Containers))
			}
			c := pod.Spec.Containers[0]
			if len(c.Args) == 0 || c.Args[0] != "serve" {
				t.Errorf("args %q, want serve", c.Args)
			}
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
				if strings.HasPrefix(e.Name, "RINGACTOR_") && !slices.Contains(known, e.Name) {
					t.Errorf("env %s: serve reads no such variable (serve -h lists %v)", e.Name, known)
				}
			}
			for _, name := range []string{"POD_NAME", "POD_NAMESPACE", "POD_IP"} {
				if _, ok := env[name]; !ok {
					t.Errorf("env lacks %s (the Kubernetes provider and --advertise need it)", name)
				}
			}
			if env["RINGACTOR_PROVIDER"] != "k8s" || env["RINGACTOR_CLUSTER"] == "" {
				t.Errorf("provider %q, cluster %q", env["RINGACTOR_PROVIDER"], env["RINGACTOR_CLUSTER"])
			}
			ports := map[string]int32{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
			}
			portOf := func(v string) int32 {
				_, p, err := net.SplitHostPort(strings.ReplaceAll(v, "$(POD_IP)", "10.0.0.7"))
				if err != nil {
					t.Fatalf("%q: %v", v, err)
				}
				n, _ := strconv.Atoi(p)
				return int32(n)
			}
			if portOf(env["RINGACTOR_BIND"]) != ports["remote"] || portOf(env["RINGACTOR_ADVERTISE"]) != ports["remote"] {
				t.Errorf("bind %s / advertise %s, container port remote %d", env["RINGACTOR_BIND"], env["RINGACTOR_ADVERTISE"], ports["remote"])
			}
			if portOf(env["RINGACTOR_ADMIN"]) != ports["admin"] {
				t.Errorf("admin %s, container port admin %d", env["RINGACTOR_ADMIN"], ports["admin"])
			}
			// The probes ask paths the admin endpoint serves, on its port.
			h := admin.New(admin.WithReadiness(func() error { return nil }))
			for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil {
					t.Errorf("%s probe: not an HTTP GET", name)
					continue
				}
				if p.HTTPGet.Port.StrVal != "admin" {
					t.Errorf("%s probe on port %v, want admin", name, p.HTTPGet.Port)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p.HTTPGet.Path, nil))
				if rec.Code != http.StatusOK {
					t.Errorf("%s probe: GET %s answers %d", name, p.HTTPGet.Path, rec.Code)
				}
			}
			if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("readiness probe %s, want /readyz (503 until joined and while leaving)", c.ReadinessProbe.HTTPGet.Path)
			}
			// The provider watches pods labelled with the cluster name.
			if got := pod.Labels[cluster.KubernetesClusterLabel]; got != env["RINGACTOR_CLUSTER"] {
				t.Errorf("pod label %s=%q, cluster %q", cluster.KubernetesClusterLabel, got, env["RINGACTOR_CLUSTER"])
			}
			podLabels := labels.Set(pod.Labels)
			if !labels.SelectorFromSet(r.sts.Spec.Selector.MatchLabels).Matches(podLabels) {
				t.Errorf("statefulset selector %v does not select its pods %v", r.sts.Spec.Selector.MatchLabels, pod.Labels)
			}
			if !labels.SelectorFromSet(r.pdb.Spec.Selector.MatchLabels).Matches(podLabels) {
				t.Errorf("PDB selector %v does not select the pods", r.pdb.Spec.Selector.MatchLabels)
			}
			for name, s := range r.services {
				if !labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
					t.Errorf("service %s selects %v, not the pods", name, s.Spec.Selector)
				}
				for _, p := range s.Spec.Ports {
					if _, ok := ports[p.TargetPort.StrVal]; !ok || ports[p.TargetPort.StrVal] != p.Port {
						t.Errorf("service %s port %d targets %v, container ports %v", name, p.Port, p.TargetPort, ports)
					}
				}
			}
			if s := r.services[r.sts.Spec.ServiceName]; s == nil || s.Spec.ClusterIP != corev1.ClusterIPNone {
				t.Errorf("statefulset's service %q is not headless", r.sts.Spec.ServiceName)
			}
			// RBAC: what the Kubernetes provider calls.
			if pod.Spec.ServiceAccountName != r.sa.Name || len(r.binding.Subjects) != 1 || r.binding.Subjects[0].Name != r.sa.Name || r.binding.RoleRef.Name != r.role.Name {
				t.Errorf("RBAC: pod account %q, account %q, binding %+v, role %q", pod.Spec.ServiceAccountName, r.sa.Name, r.binding, r.role.Name)
			}
			var verbs []string
			for _, rule := range r.role.Rules {
				if slices.Contains(rule.Resources, "pods") && slices.Contains(rule.APIGroups, "") {
					verbs = append(verbs, rule.Verbs...)
				}
			}
			for _, v := range []string{"get", "list", "watch", "patch"} {
				if !slices.Contains(verbs, v) {
					t.Errorf("role grants %v on pods, not %s", verbs, v)
				}
			}
			// serve's graceful leave takes up to 30 s after SIGTERM.
			pre := int64(0)
			if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
				pre = l.PreStop.Sleep.Seconds
			}
			if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g < 30+pre {
				t.Errorf("termination grace %v s with a %d s preStop: serve needs 30 s to leave", g, pre)
			}
			if _, asks := c.Resources.Limits["nvidia.com/gpu"]; asks {
				t.Errorf("the base asks for a GPU")
			}
			checkGPUOverlay(t, r.sts)
		}
	}
}

// checkGPUOverlay checks deploy/overlays/gpu: it builds on the base and
// patches the base's StatefulSet and container with a GPU limit, the NVIDIA
// runtime class and the device plugin's toleration.
func checkGPUOverlay(t *testing.T, base *appsv1.StatefulSet) {
	t.Helper()
	const dir = "../../deploy/overlays/gpu"
	k := readKustomization(t, dir)
	if len(k.Resources) != 1 || filepath.Clean(filepath.Join(dir, k.Resources[0])) != filepath.Clean("../../deploy/base") {
		t.Errorf("gpu overlay resources %v, want the base", k.Resources)
	}
	if len(k.Patches) != 1 || k.Patches[0].Target.Kind != "StatefulSet" || k.Patches[0].Target.Name != base.Name {
		t.Fatalf("gpu overlay patches %+v, want one of StatefulSet %s", k.Patches, base.Name)
	}
	b, err := os.ReadFile(filepath.Join(dir, k.Patches[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	var p appsv1.StatefulSet
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("%s: %v", k.Patches[0].Path, err)
	}
	spec := p.Spec.Template.Spec
	if p.Name != base.Name || len(spec.Containers) != 1 || spec.Containers[0].Name != base.Spec.Template.Spec.Containers[0].Name {
		t.Fatalf("the patch names %s/%v, not the base's StatefulSet and container", p.Name, spec.Containers)
	}
	if q, ok := spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; !ok || q.Value() < 1 {
		t.Errorf("GPU limit %v", spec.Containers[0].Resources.Limits)
	}
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName != "nvidia" {
		t.Errorf("runtime class %v, want nvidia", spec.RuntimeClassName)
	}
	tolerates := false
	for _, tol := range spec.Tolerations {
		tolerates = tolerates || tol.Key == "nvidia.com/gpu"
	}
	if !tolerates {
		t.Errorf("no toleration of nvidia.com/gpu taints: %v", spec.Tolerations)
	}
}

// TestDockerfile parses the Dockerfile with Docker's own parser and checks
// its stages: a cgo build of ./cmd/ringactor, a runtime stage that copies
// that binary to the entrypoint's path, runs as an unprivileged user and
// exposes the ports the manifests use.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	res, err := parser.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	type stage struct {
		name string
		cmds [][]string // instruction, then its arguments (flags first)
	}
	var stages []*stage
	for _, n := range res.AST.Children {
		words := append([]string{strings.ToLower(n.Value)}, n.Flags...)
		for a := n.Next; a != nil; a = a.Next {
			words = append(words, a.Value)
		}
		if words[0] == "from" {
			s := &stage{}
			if len(words) == 4 && strings.EqualFold(words[2], "as") {
				s.name = words[3]
			}
			stages = append(stages, s)
		}
		if len(stages) > 0 {
			stages[len(stages)-1].cmds = append(stages[len(stages)-1].cmds, words)
		}
	}
	if len(stages) != 2 || stages[0].name != "build" || stages[1].name != "runtime" {
		t.Fatalf("stages %v, want build and runtime", len(stages))
	}
	find := func(s *stage, instr string) [][]string {
		var out [][]string
		for _, c := range s.cmds {
			if c[0] == instr {
				out = append(out, c)
			}
		}
		return out
	}
	built := ""
	for _, run := range find(stages[0], "run") {
		line := strings.Join(run[1:], " ")
		if strings.Contains(line, "go build") && strings.Contains(line, "./cmd/ringactor") {
			if !strings.Contains(line, "CGO_ENABLED=1") {
				t.Errorf("the build does not enable cgo: %s", line)
			}
			f := strings.Fields(line)
			if i := slices.Index(f, "-o"); i >= 0 && i+1 < len(f) {
				built = f[i+1]
			}
		}
	}
	if built == "" {
		t.Fatal("no RUN go build -o ... ./cmd/ringactor in the build stage")
	}
	rt := stages[1]
	entry := find(rt, "entrypoint")
	if len(entry) != 1 || len(entry[0]) != 2 {
		t.Fatalf("entrypoint %v, want one exec-form binary", entry)
	}
	copied := false
	for _, c := range find(rt, "copy") {
		if slices.Contains(c, "--from=build") && slices.Contains(c, built) && c[len(c)-1] == entry[0][1] {
			copied = true
		}
	}
	if !copied {
		t.Errorf("the runtime stage does not COPY --from=build %s to the entrypoint %s", built, entry[0][1])
	}
	user := find(rt, "user")
	if len(user) != 1 || user[0][1] == "root" || strings.HasPrefix(user[0][1], "0") {
		t.Errorf("user %v, want an unprivileged one", user)
	}
	r := readBase(t)
	if uid := r.sts.Spec.Template.Spec.SecurityContext.RunAsUser; uid == nil || fmt.Sprint(*uid) != strings.Split(user[0][1], ":")[0] {
		t.Errorf("the pod runs as %v, the image as %s", uid, user[0][1])
	}
	var exposed []string
	for _, e := range find(rt, "expose") {
		exposed = append(exposed, e[1:]...)
	}
	for _, p := range r.sts.Spec.Template.Spec.Containers[0].Ports {
		if !slices.Contains(exposed, strconv.Itoa(int(p.ContainerPort))) {
			t.Errorf("container port %d (%s) is not EXPOSEd (%v)", p.ContainerPort, p.Name, exposed)
		}
	}
}
