package webhook

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/registry"
)

// TestRegistryHostsMetrics: the breakers of the process's hosts are
// exported by state, with a series per host for at most 20 of them
// however many hosts pull requests name.
func TestRegistryHostsMetrics(t *testing.T) {
	hosts := registry.NewHosts(registry.HostsOptions{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewRegistryHosts(hosts))
	for i := range 25 {
		hosts.Trip(fmt.Sprintf("silent%02d.test", i), context.DeadlineExceeded)
	}
	release, err := hosts.Acquire(context.Background(), "fine.test", "job")
	if err != nil {
		t.Fatal(err)
	}
	defer release(nil)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	series := 0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "," + l.GetName() + "=" + l.GetValue()
			}
			got[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			if f.GetName() == "catalogbot_registry_breaker_state" {
				series++
			}
		}
	}
	want := map[string]float64{
		"catalogbot_registry_breaker_opened_total":             25,
		"catalogbot_registry_breakers,state=open":              25,
		"catalogbot_registry_breakers,state=half-open":         0,
		"catalogbot_registry_host_contacts":                    1,
		"catalogbot_registry_breaker_state,host=fine.test":     0,
		"catalogbot_registry_breaker_state,host=silent00.test": 2,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if series != maxHostSeries {
		t.Errorf("%d host series, want %d", series, maxHostSeries)
	}
}
