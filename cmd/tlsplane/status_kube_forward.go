package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// adminForward is a port-forward to a Pod's admin port on an ephemeral
// loopback port of this machine.
type adminForward struct {
	base string // http://127.0.0.1:<local>
	// errs are the forwarder's errors, e.g. the Pod's port refusing the
	// connection, as the kubelet reported them.
	errs  *lockedBuffer
	stop  chan struct{}
	done  chan error
	close sync.Once
}

// forwardAdmin opens the forward through the API server as kubectl does
// since 1.30: WebSocket first, SPDY when the server cannot upgrade to it.
// A refusal is explained as the RBAC verb and resource it lacks.
func forwardAdmin(ctx context.Context, c *cluster, pod *corev1.Pod, port int32, timeout time.Duration) (*adminForward, error) {
	url := c.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(c.config)
	if err != nil {
		return nil, fmt.Errorf("port-forward to Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	wsDialer, err := portforward.NewSPDYOverWebsocketDialer(url, c.config)
	if err != nil {
		return nil, fmt.Errorf("port-forward to Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	dialer := portforward.NewFallbackDialer(wsDialer, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	f := &adminForward{errs: &lockedBuffer{}, stop: make(chan struct{}), done: make(chan error, 1)}
	// client-go reports a stream's failure through HandleError, as a
	// klog line; a command reports it in its own error instead.
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, _ string, _ ...any) {
		fmt.Fprintln(f.errs, err)
	}}
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(int(port))}, f.stop, ready, io.Discard, f.errs)
	if err != nil {
		return nil, fmt.Errorf("port-forward to Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	go func() { f.done <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-f.done:
		return nil, forwardRefused(ctx, c, pod, err, f.errs.String())
	case <-time.After(timeout):
		f.Close()
		return nil, fmt.Errorf("port-forward to Pod %s/%s port %d: not open after %s (--timeout)", pod.Namespace, pod.Name, port, timeout)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		f.Close()
		return nil, fmt.Errorf("port-forward to Pod %s/%s: no local port: %v", pod.Namespace, pod.Name, err)
	}
	f.base = fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local)
	return f, nil
}

// Close ends the forward and waits (a bounded while) for it to end.
func (f *adminForward) Close() {
	f.close.Do(func() {
		close(f.stop)
		select {
		case <-f.done:
		case <-time.After(2 * time.Second):
		}
	})
}

// forwardRefused says why the API server refused the forward: the RBAC
// verbs on pods/portforward the kubeconfig's user lacks, asked of the API
// server rather than guessed from the message. Since Kubernetes 1.35 a
// WebSocket forward (a GET) needs create as well as get; SPDY (a POST)
// needs create.
func forwardRefused(ctx context.Context, c *cluster, pod *corev1.Pod, err error, errOut string) error {
	var denied []string
	for _, verb := range []string{"get", "create"} {
		review, rerr := c.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: pod.Namespace, Verb: verb, Resource: "pods", Subresource: "portforward", Name: pod.Name,
			}},
		}, metav1.CreateOptions{})
		if rerr == nil && !review.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	if len(denied) > 0 {
		return fmt.Errorf("RBAC forbids %s pods/portforward in namespace %s (Pod %s): %v\n%s", strings.Join(denied, " and "), pod.Namespace, pod.Name, err, statusRBACNeeded)
	}
	if s := strings.TrimSpace(errOut); s != "" {
		return fmt.Errorf("port-forward to Pod %s/%s: %v: %s", pod.Namespace, pod.Name, err, s)
	}
	return fmt.Errorf("port-forward to Pod %s/%s: %v", pod.Namespace, pod.Name, err)
}

// lockedBuffer is the forwarder's error output, written from its goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
