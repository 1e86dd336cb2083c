package dirsource

import "github.com/prometheus/client_golang/prometheus"

// metrics tell an operator that a file is being ignored, which the served
// configuration alone cannot show: the last good objects stay served.
type metrics struct {
	fileErrors   prometheus.Counter
	failingFiles prometheus.Gauge
	files        prometheus.Gauge
	reloads      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		fileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_source_file_errors_total",
			Help: "Manifest files that could not be read or parsed; their last good objects stay served.",
		}),
		failingFiles: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_source_files_failing",
			Help: "Manifest files whose current content could not be read or parsed.",
		}),
		files: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tlsplane_source_files",
			Help: "Manifest files the directory source currently reads.",
		}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tlsplane_source_reloads_total",
			Help: "Times the directory source's objects changed after its first read.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.fileErrors, m.failingFiles, m.files, m.reloads)
	}
	return m
}
