package main

import (
	"bufio"
	"flag"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/translator/document"
)

// BenchmarkTranslatePhases is BenchmarkTranslateGenerated split into its
// three phases (read the manifests, translate and publish, render the
// document), each with the CPU time the process spent in it (user-ms/op):
// on 2 shared cores, CPU time moves less with the load than wall time.
func BenchmarkTranslatePhases(b *testing.B) {
	for _, services := range []int{1000, 10000} {
		b.Run("services="+strconv.Itoa(services), func(b *testing.B) {
			dir := generatedWorldDir(b, services)
			fs := flag.NewFlagSet("translate", flag.ContinueOnError)
			tf := registerTranslationFlags(fs)
			if err := fs.Parse(nil); err != nil {
				b.Fatal(err)
			}
			now := time.Unix(1700000000, 0).UTC()
			warn := func(string) {}
			in, _, err := readManifests([]string{dir}, tf.readLimits(), warn)
			if err != nil {
				b.Fatal(err)
			}
			out, _, err := translateAsServed(in, tf, now, warn)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("read", func(b *testing.B) {
				cpu := startCPU()
				for b.Loop() {
					if _, _, err := readManifests([]string{dir}, tf.readLimits(), warn); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
			b.Run("translate", func(b *testing.B) {
				cpu := startCPU()
				for b.Loop() {
					if _, _, err := translateAsServed(in, tf, now, warn); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
			b.Run("render", func(b *testing.B) {
				cpu := startCPU()
				for b.Loop() {
					w := bufio.NewWriterSize(io.Discard, 1<<20)
					if err := document.RenderTo(w, in, out, document.FormatYAML); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
			})
		})
	}
}

// processCPU is the process's user CPU time since it was started.
type processCPU time.Duration

func startCPU() processCPU { return processCPU(userCPU()) }

func (c processCPU) report(b *testing.B) {
	b.ReportMetric(float64(userCPU()-time.Duration(c))/float64(time.Millisecond)/float64(b.N), "user-ms/op")
}

func userCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano())
}
