package webhook

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/registry"
)

// maxHostSeries bounds the hosts catalogbot_registry_breaker_state names:
// pull requests name the hosts, so their number is anyone's to choose. The
// counts by state (catalogbot_registry_breakers) cover every host.
const maxHostSeries = 20

// RegistryHosts exports the process's registry.Hosts, read at each scrape:
//
//   - catalogbot_registry_breaker_state{host}: 0 closed (with contacts
//     under way), 1 half-open, 2 open, for at most 20 hosts, first by
//     name, of those not closed or in contact;
//   - catalogbot_registry_breakers{state}: how many hosts are open and
//     half-open;
//   - catalogbot_registry_host_contacts: the contacts under way;
//   - catalogbot_registry_breaker_opened_total: how often a breaker
//     opened.
//
// A host that is down is the registry's fault, not the service's: it
// shows here and in the pull requests that name it, never in /readyz.
type RegistryHosts struct {
	hosts                             *registry.Hosts
	state, breakers, contacts, opened *prometheus.Desc
}

// NewRegistryHosts returns the collector of hosts; register it where the
// Metrics are.
func NewRegistryHosts(hosts *registry.Hosts) *RegistryHosts {
	return &RegistryHosts{
		hosts: hosts,
		state: prometheus.NewDesc("catalogbot_registry_breaker_state",
			"The circuit breaker of a registry host pull requests named: 0 closed, 1 half-open, 2 open (at most 20 hosts).", []string{"host"}, nil),
		breakers: prometheus.NewDesc("catalogbot_registry_breakers",
			"Registry hosts whose circuit breaker is open or half-open.", []string{"state"}, nil),
		contacts: prometheus.NewDesc("catalogbot_registry_host_contacts",
			"Contacts with registry hosts under way, across every job.", nil, nil),
		opened: prometheus.NewDesc("catalogbot_registry_breaker_opened_total",
			"Times a registry host's circuit breaker opened.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *RegistryHosts) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.breakers
	ch <- c.contacts
	ch <- c.opened
}

// Collect implements prometheus.Collector.
func (c *RegistryHosts) Collect(ch chan<- prometheus.Metric) {
	status, opened := c.hosts.Status()
	count := map[registry.BreakerState]int{}
	contacts := 0
	for i, s := range status {
		count[s.State]++
		contacts += s.Contacts
		if i < maxHostSeries {
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, float64(s.State), s.Host)
		}
	}
	for _, st := range []registry.BreakerState{registry.Open, registry.HalfOpen} {
		ch <- prometheus.MustNewConstMetric(c.breakers, prometheus.GaugeValue, float64(count[st]), st.String())
	}
	ch <- prometheus.MustNewConstMetric(c.contacts, prometheus.GaugeValue, float64(contacts))
	ch <- prometheus.MustNewConstMetric(c.opened, prometheus.CounterValue, float64(opened))
}
