// Command perfplot draws docs/performance.png from the propagation results of
// e2e/perf (JSON): latency (p50, p99) and resident memory (tlsplane,
// Envoy) against the cluster count, on a log scale. It uses only the
// standard library, so the modules gain no dependency.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"log"
	"math"
	"os"
	"sort"
)

type result struct {
	Clusters    int     `json:"clusters"`
	P50         float64 `json:"p50_ms"`
	P99         float64 `json:"p99_ms"`
	TLSPlaneRSS float64 `json:"tlsplane_rss_mib"`
	EnvoyRSS    float64 `json:"envoy_rss_mib"`
}

type series struct {
	name  string
	color color.RGBA
	ys    []float64
}

var (
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
	grey  = color.RGBA{210, 210, 210, 255}
	blue  = color.RGBA{31, 119, 180, 255}
	red   = color.RGBA{214, 39, 40, 255}
	green = color.RGBA{44, 160, 44, 255}
)

func main() {
	in := flag.String("in", "", "propagation results (JSON) of e2e/perf")
	out := flag.String("out", "performance.png", "PNG to write")
	flag.Parse()
	b, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var results []result
	if err := json.Unmarshal(b, &results); err != nil {
		log.Fatal(err)
	}
	if len(results) == 0 {
		log.Fatal("no results")
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Clusters < results[j].Clusters })
	xs := make([]float64, len(results))
	p50, p99, tp, ev := series{"p50", blue, nil}, series{"p99", red, nil}, series{"tlsplane", blue, nil}, series{"envoy", green, nil}
	for i, r := range results {
		xs[i] = float64(r.Clusters)
		p50.ys, p99.ys = append(p50.ys, r.P50), append(p99.ys, r.P99)
		tp.ys, ev.ys = append(tp.ys, r.TLSPlaneRSS), append(ev.ys, r.EnvoyRSS)
	}
	img := image.NewRGBA(image.Rect(0, 0, 1000, 420))
	draw.Draw(img, img.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)
	panel(img, image.Rect(0, 0, 500, 420), "edit to envoy applied (ms)", xs, []series{p50, p99}, 300)
	panel(img, image.Rect(500, 0, 1000, 420), "resident memory (MiB)", xs, []series{tp, ev}, 500)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// panel draws series against xs (log scale) in r, with a dashed target line.
func panel(img *image.RGBA, r image.Rectangle, title string, xs []float64, ss []series, target float64) {
	left, right, top, bottom := r.Min.X+70, r.Max.X-20, r.Min.Y+50, r.Max.Y-60
	ymax := target * 1.2
	for _, s := range ss {
		for _, y := range s.ys {
			ymax = math.Max(ymax, y*1.1)
		}
	}
	lx0, lx1 := math.Log10(xs[0]), math.Log10(xs[len(xs)-1])
	if lx1 == lx0 {
		lx0, lx1 = lx0-0.5, lx1+0.5
	}
	px := func(x float64) int { return left + int(float64(right-left)*(math.Log10(x)-lx0)/(lx1-lx0)) }
	py := func(y float64) int { return bottom - int(float64(bottom-top)*y/ymax) }

	drawText(img, r.Min.X+(r.Dx()-textWidth(title, 3))/2, r.Min.Y+12, 3, title, black)
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		line(img, left, py(y), right, py(y), grey, false)
		label := fmt.Sprintf("%.0f", y)
		drawText(img, left-8-textWidth(label, 2), py(y)-5, 2, label, black)
	}
	for _, x := range xs {
		line(img, px(x), top, px(x), bottom, grey, false)
		label := fmt.Sprintf("%.0f", x)
		drawText(img, px(x)-textWidth(label, 2)/2, bottom+8, 2, label, black)
	}
	drawText(img, (left+right-textWidth("clusters", 2))/2, bottom+30, 2, "clusters", black)
	line(img, left, bottom, right, bottom, black, false)
	line(img, left, top, left, bottom, black, false)
	line(img, left, py(target), right, py(target), red, true)
	drawText(img, right-textWidth("target", 2), py(target)-14, 2, "target", red)
	for i, s := range ss {
		for j := 1; j < len(xs); j++ {
			line(img, px(xs[j-1]), py(s.ys[j-1]), px(xs[j]), py(s.ys[j]), s.color, false)
		}
		for j := range xs {
			dot(img, px(xs[j]), py(s.ys[j]), s.color)
		}
		drawText(img, left+12, top+6+i*16, 2, s.name, s.color)
	}
}

// line draws with Bresenham's algorithm, 2 px thick; dashed skips every
// other 8 px.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, dashed bool) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	err := dx + dy
	for n := 0; ; n++ {
		if !dashed || (n/8)%2 == 0 {
			img.SetRGBA(x0, y0, c)
			img.SetRGBA(x0+1, y0, c)
			img.SetRGBA(x0, y0+1, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * err
		if e2 >= dy {
			err += dy
			x0 += sx
		}
		if e2 <= dx {
			err += dx
			y0 += sy
		}
	}
}

func dot(img *image.RGBA, x, y int, c color.RGBA) {
	for dy := -3; dy <= 3; dy++ {
		for dx := -3; dx <= 3; dx++ {
			if dx*dx+dy*dy <= 9 {
				img.SetRGBA(x+dx, y+dy, c)
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
