package statuswriter

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1client "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/typed/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// route is a route object of any route kind (translator.RouteKinds).
type route interface {
	metav1.Object
	runtime.Object
}

// routeClient is what writeRoute needs of a route kind's typed client,
// whatever the kind's type.
type routeClient struct {
	get          func(ctx context.Context, name string) (route, error)
	updateStatus func(ctx context.Context, r route) error
}

// routeClients are the typed clients of the route kinds, by kind: the
// one thing the writer needs of a route kind that its description
// (translator.RouteKinds) cannot give, since a typed client is per type.
var routeClients = map[translator.Kind]func(gwv1client.GatewayV1Interface, string) routeClient{
	translator.KindHTTPRoute: clientOf(gwv1client.GatewayV1Interface.HTTPRoutes),
	translator.KindGRPCRoute: clientOf(gwv1client.GatewayV1Interface.GRPCRoutes),
	translator.KindTLSRoute:  clientOf(gwv1client.GatewayV1Interface.TLSRoutes),
	translator.KindTCPRoute:  clientOf(gwv1client.GatewayV1Interface.TCPRoutes),
	translator.KindUDPRoute:  clientOf(gwv1client.GatewayV1Interface.UDPRoutes),
}

// routeClientOf is the client of route kind rk's objects in namespace.
func routeClientOf(gw gwv1client.GatewayV1Interface, rk translator.RouteKind, namespace string) routeClient {
	of, ok := routeClients[rk.Kind()]
	if !ok {
		err := fmt.Errorf("status writer: no client for route kind %s", rk.Kind())
		return routeClient{
			get:          func(context.Context, string) (route, error) { return nil, err },
			updateStatus: func(context.Context, route) error { return err },
		}
	}
	return of(gw, namespace)
}

// typedClient is a route kind's typed client, of objects T.
type typedClient[T route] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// clientOf makes a routeClient of the typed client in a namespace that of
// gives.
func clientOf[T route, C typedClient[T]](of func(gwv1client.GatewayV1Interface, string) C) func(gwv1client.GatewayV1Interface, string) routeClient {
	return func(gw gwv1client.GatewayV1Interface, namespace string) routeClient {
		c := of(gw, namespace)
		return routeClient{
			get: func(ctx context.Context, name string) (route, error) {
				r, err := c.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				return r, nil
			},
			updateStatus: func(ctx context.Context, r route) error {
				t, ok := r.(T)
				if !ok {
					return fmt.Errorf("status writer: %T is not of its route kind", r)
				}
				_, err := c.UpdateStatus(ctx, t, metav1.UpdateOptions{FieldManager: FieldManager})
				return err
			},
		}
	}
}
