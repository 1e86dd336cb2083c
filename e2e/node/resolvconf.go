package node

import (
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ClusterDomain is the cluster's DNS domain, a kubelet's --cluster-domain.
const ClusterDomain = "cluster.local"

// hostResolvConf is the resolv.conf dnsPolicy Default starts from.
const hostResolvConf = "/etc/resolv.conf"

// dnsConf is a resolv.conf: its nameservers, search list and options.
type dnsConf struct {
	nameservers, searches, options []string
}

// podDNS is the resolv.conf the kubelet would give pod, clusterDNS being
// the cluster resolver's address ("" when the agent runs none) and host
// the node's own; nil: the Pod sees the node's file unchanged.
func podDNS(pod *corev1.Pod, clusterDNS string, host dnsConf) (*dnsConf, error) {
	var conf dnsConf
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	// As the kubelet: ClusterFirst with no cluster resolver, or on the
	// host's network, is Default.
	if clusterDNS == "" && (policy == corev1.DNSClusterFirst || policy == corev1.DNSClusterFirstWithHostNet) ||
		pod.Spec.HostNetwork && policy == corev1.DNSClusterFirst {
		policy = corev1.DNSDefault
	}
	switch policy {
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		conf = dnsConf{
			nameservers: []string{clusterDNS},
			searches:    []string{pod.Namespace + ".svc." + ClusterDomain, "svc." + ClusterDomain, ClusterDomain},
			options:     []string{"ndots:5"},
		}
	case corev1.DNSDefault:
		if pod.Spec.DNSConfig == nil {
			return nil, nil
		}
		conf = host
	case corev1.DNSNone:
		if pod.Spec.DNSConfig == nil {
			return nil, fmt.Errorf("dnsPolicy None: spec.dnsConfig is required")
		}
	default:
		return nil, fmt.Errorf("dnsPolicy %q: want ClusterFirst, ClusterFirstWithHostNet, Default or None", policy)
	}
	if c := pod.Spec.DNSConfig; c != nil {
		conf.nameservers = appendNew(conf.nameservers, c.Nameservers...)
		conf.searches = appendNew(conf.searches, c.Searches...)
		for _, o := range c.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			// A Pod's option replaces the policy's of that name.
			conf.options = slices.DeleteFunc(conf.options, func(have string) bool {
				name, _, _ := strings.Cut(have, ":")
				return name == o.Name
			})
			conf.options = append(conf.options, opt)
		}
	}
	if len(conf.nameservers) > 3 {
		return nil, fmt.Errorf("spec.dnsConfig: %d nameservers with the policy's, the resolver reads 3", len(conf.nameservers))
	}
	return &conf, nil
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		if !slices.Contains(list, m) {
			list = append(list, m)
		}
	}
	return list
}

// String is the file.
func (c dnsConf) String() string {
	var b strings.Builder
	for _, n := range c.nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if len(c.searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.searches, " "))
	}
	if len(c.options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.options, " "))
	}
	return b.String()
}

// parseResolvConf reads the nameserver, search and options lines.
func parseResolvConf(text string) dnsConf {
	var c dnsConf
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			c.nameservers = append(c.nameservers, f[1])
		case "search", "domain":
			c.searches = f[1:]
		case "options":
			c.options = append(c.options, f[1:]...)
		}
	}
	return c
}

// nodeDNS is the node's own resolv.conf, empty if it has none.
func nodeDNS() dnsConf {
	data, _ := os.ReadFile(hostResolvConf)
	return parseResolvConf(string(data))
}
